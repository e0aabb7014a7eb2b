package runtime

import (
	"testing"
	"unsafe"
)

// An inbox entry of a string key and a small event fills one cache line:
// the submitter writes one line per event, the worker reads one.
func TestInboxEntryIsOneCacheLine(t *testing.T) {
	type event struct{ a, b, c uint32 }
	if n := unsafe.Sizeof(entry[string, event]{}); n > 64 {
		t.Errorf("entry is %d bytes, want at most 64", n)
	}
	if n := unsafe.Sizeof(entry[string, any]{}); n > 64 {
		t.Errorf("entry of an interface event is %d bytes, want at most 64", n)
	}
}
