// Package wide measures what a queued event costs in a generated dispatcher
// whose entity has many events: schema.yaml declares Vehicle, 30 events of
// about 100 bytes each, generated into package fleet (the sub-directory
// fleet/, the default output folder: the import path ends in the package's
// name). The benchmark publishes events while the only worker is held and
// reports the heap bytes held per pending event and the allocations per
// publish:
//
//	go test -run '^$' -bench Queued -benchtime 20000x ./examples/wide
package wide
