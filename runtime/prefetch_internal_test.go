package runtime

import (
	"fmt"
	"testing"
)

// TestBoxAt checks where the inline loop finds the box it prefetches: an
// interface event's own, a struct's first interface field (a generated
// envelope of boxed events), and none in a struct that holds no interface
// by value.
func TestBoxAt(t *testing.T) {
	type body struct{ Event fmt.Stringer }
	type env struct {
		Version uint64
		Kind    int
		Body    body
	}
	type plain struct {
		Key  string
		Ptr  *fmt.Stringer
		List []error
	}
	check := func(name string, off uintptr, ok bool, wantOff uintptr, wantOK bool) {
		t.Helper()
		if off != wantOff || ok != wantOK {
			t.Errorf("%s: boxAt = %d, %v; want %d, %v", name, off, ok, wantOff, wantOK)
		}
	}
	off, ok := boxAt[error]()
	check("error", off, ok, 0, true)
	off, ok = boxAt[env]()
	check("envelope", off, ok, 16, true)
	off, ok = boxAt[plain]()
	check("plain", off, ok, 0, false)

	var v env
	v.Body.Event = stringer("x")
	var i fmt.Stringer = v.Body.Event
	if got, want := boxOf(&v, 16), boxOf(&i, 0); got != want || got == 0 {
		t.Errorf("boxOf(envelope) = %#x, want the box %#x", got, want)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
