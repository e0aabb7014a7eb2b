package runtime

import (
	"reflect"
	"unsafe"
)

// An inline batch runs events that submitters wrote a while ago. When E is
// an interface, or holds one (as a generated dispatcher's envelope of an
// entity whose events travel boxed does), the event's value lives in a box
// of its own, allocated by the submitter among the
// boxes of every other shard's events: a worker that reads it finds it in
// no cache, and waits for memory once per event (about 100ns, a third of
// a generated event's cost when the backlog is deep). The inline loop, and
// a lane's turn over the events it took, ask for the box of the event
// prefetchAhead places ahead while they run this one.

// prefetchAhead is how many events ahead the inline loop prefetches.
const prefetchAhead = 4

// boxAt returns the offset in an E of the interface value whose box the
// inline loop prefetches: 0 for an interface E, that of its first
// interface field for a struct E (fields of fields included), and false
// for an E that holds none.
func boxAt[E any]() (uintptr, bool) { return interfaceIn(reflect.TypeFor[E]()) }

// interfaceIn returns the offset of the first interface value in a t, and
// false when t holds none outside pointers, slices and maps.
func interfaceIn(t reflect.Type) (uintptr, bool) {
	switch t.Kind() {
	case reflect.Interface:
		return 0, true
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if off, ok := interfaceIn(f.Type); ok {
				return f.Offset + off, true
			}
		}
	}
	return 0, false
}

// boxOf returns the address of the value that the interface value at
// offset off in the E at p holds (its data word).
func boxOf[E any](p *E, off uintptr) uintptr {
	return (*[2]uintptr)(unsafe.Add(unsafe.Pointer(p), off))[1]
}
