// Package benchmarks compares the ordergen runtime with its peers side by
// side, in one process, on the same workloads. It is a module of its own so
// that the peers (Watermill among them) stay out of ordergen users' go.mod.
//
// BenchmarkDispatch/<workload>/<peer> times one producer goroutine (4 in
// uniform-noop-4sub, each with its own keys) submitting b.N events and
// waiting until all are handled; one op is one event, so ns/op is
// ns/event. The workloads (package workload) are uniform-noop,
// uniform-1us, skewed-noop, skewed-1us and uniform-noop-4sub: 10,000 keys,
// uniform or with one key getting half of the events, with a no-op
// handler or about 1 µs of calibrated CPU work. The peers (package peers)
// are ordergen (runtime.New), generated (the dispatcher generated from
// schema.yaml into package benchevents), pool, striped, chained and
// watermill, all with Workers handlers at most running at once.
//
// BenchmarkHotKey/<peer> runs the hot-key scenario: HotKeyEvents events,
// half of them on one key, each taking about 1 µs of CPU. One op is one
// whole scenario; the ns/last-cold metric is when the last event of a key
// other than the hot one completed, counted from the first submit.
//
// Every run checks that each event was handled exactly once and, for the
// ordered peers, in per-key order, and fails the benchmark otherwise.
//
// BenchmarkKafkaNoop consumes one topic of KafkaNoopRecords records on an
// in-process kfake cluster with a handler that does nothing, through
// runtime/kafka's consumer and the generated dispatcher and through a plain
// franz-go poll loop, and reports the records/s of both and their ratio.
// BenchmarkKafka compares key-level concurrency with one consumer thread per
// partition for a handler that sleeps, and BenchmarkKafkaProduce the typed
// producer with raw franz-go.
//
// Run it with
//
//	go test -run '^$' -bench Dispatch -benchmem -benchtime=1000000x
//	go test -run '^$' -bench HotKey -benchmem -benchtime=10x
//	go test -run '^$' -bench KafkaNoop -benchtime=2x -count=5
//
// or go run ./cmd/report to run the three in interleaved rounds and write
// docs/benchmarks.md and docs/benchmarks.svg.
package benchmarks

// Workers is the concurrency of every peer: the ordergen engine's
// MaxActive, the pool's and the striped peer's goroutines, the chained
// peer's running chains and Watermill's shard topics.
const Workers = 8

// HotKeyEvents is the number of events in one run of the hot-key scenario.
const HotKeyEvents = 100000

// KafkaPartitions is the number of partitions of the Kafka benchmarks'
// topics.
const KafkaPartitions = 12

// KafkaNoopRecords is the number of records on the topic of
// BenchmarkKafkaNoop: events of the uniform workload (NumKeys keys), each
// key's with its sequence number as the version.
const KafkaNoopRecords = 100000
