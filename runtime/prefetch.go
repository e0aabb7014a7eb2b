package runtime

import (
	"reflect"
	"unsafe"
)

// An inline batch runs events that submitters wrote a while ago. When E is
// an interface (as a generated dispatcher's entity event is), the event's
// value lives in a box of its own, allocated by the submitter among the
// boxes of every other shard's events: a worker that reads it finds it in
// no cache, and waits for memory once per event (about 100ns, a third of
// a generated event's cost when the backlog is deep). The inline loop, and
// a lane's turn over the events it took, ask for the box of the event
// prefetchAhead places ahead while they run this one.

// prefetchAhead is how many events ahead the inline loop prefetches.
const prefetchAhead = 4

// isInterface reports whether E is an interface type.
func isInterface[E any]() bool {
	return reflect.TypeFor[E]().Kind() == reflect.Interface
}

// boxOf returns the address of the value that the interface value at p
// holds (its data word); p must point to a value of an interface type.
func boxOf[E any](p *E) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(p))[1]
}
