package peers_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// TestPoliciesGuardsVersions checks that the policies peer's hand-written
// guard decides as the generated one does: an event past a gap waits for
// the versions before it, and a duplicate is skipped, which its Close then
// reports, since the benchmarks expect every event to be simply handled.
func TestPoliciesGuardsVersions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var got []uint32
	p, err := peers.NewPolicies(func(_ string, ev peers.Event) {
		mu.Lock()
		got = append(got, ev.Seq)
		mu.Unlock()
	}, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint32{2, 3, 1, 2} { // 2 and 3 past a gap, then 1, then 2 again
		if err := p.Submit(ctx, "k0", peers.Event{Key: 0, Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	err = p.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "not simply handled") {
		t.Errorf("Close after a skipped duplicate: %v, want it reported", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []uint32{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
}
