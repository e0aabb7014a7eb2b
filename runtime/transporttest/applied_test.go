package transporttest_test

import (
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transporttest"
)

// Applied applies each key's next event, counts one that comes again,
// records one that comes early, and Wait returns once the wanted number is
// applied.
func TestApplied(t *testing.T) {
	a := transporttest.NewApplied(3)
	a.Apply("x", "k", 1)
	a.Apply("y", "k", 2)
	a.Apply("y", "k", 2) // again
	a.Apply("x", "j", 2) // before j's first
	a.Apply("x", "j", 1)
	a.Wait(t, 10*time.Second) // three applied: returns at once
	applied, dups, skips, by := a.Snapshot()
	if applied != 3 || dups != 1 {
		t.Errorf("applied %d, dups %d; want 3 and 1", applied, dups)
	}
	if len(skips) != 1 || skips[0] != "j: 2 after 0" {
		t.Errorf("skips %q; want one, j's 2 after 0", skips)
	}
	if by["x"] != 2 || by["y"] != 1 {
		t.Errorf("by consumer %v; want x 2, y 1", by)
	}
}
