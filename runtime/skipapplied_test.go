package runtime_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// A guard that stores an event's version without handing the event to the
// handler (a late state transition, an unimplemented event) skips it with
// SkipApplied: the events held on the version gap it filled are offered
// again, as after a handled event. With a plain Skip (a duplicate, which
// stores nothing) they stay held. Found by the README's quick start over
// 20 seeds: an unimplemented event that filled a gap left the later events
// held until Close parked them.
func TestSkipAppliedReoffersHeldEvents(t *testing.T) {
	for _, tc := range []struct {
		skip     func(string) error
		wantHeld int
	}{
		{runtime.SkipApplied, 0},
		{runtime.Skip, 2},
	} {
		var mu sync.Mutex // guards stored and handled
		stored := 0
		var handled []int
		e := mustNew(t, func(_ context.Context, _ string, x ev) error {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case x.Seq <= stored:
				return runtime.Skip("duplicate")
			case x.Seq > stored+1:
				return runtime.Hold("version gap")
			}
			stored = x.Seq
			if x.Seq == 2 { // the version is stored, the handler not called
				return tc.skip("unimplemented")
			}
			handled = append(handled, x.Seq)
			return nil
		}, runtime.Config[string, ev]{MaxActive: 1})
		ctx := context.Background()
		for _, seq := range []int{1, 3, 4, 2} {
			if err := e.Submit(ctx, "k", ev{Seq: seq}); err != nil {
				t.Fatal(err)
			}
		}
		flush(t, e)
		s := e.Stats()
		mu.Lock()
		got := slices.Clone(handled)
		mu.Unlock()
		if tc.wantHeld == 0 && (!slices.Equal(got, []int{1, 3, 4}) || s.Held != 0 || s.Handled != 3 || s.Skipped != 1) {
			t.Errorf("SkipApplied: handled %v, stats %+v; want 1 3 4 handled, 2 skipped, none held", got, s)
		}
		if tc.wantHeld != 0 && (!slices.Equal(got, []int{1}) || s.Held != int64(tc.wantHeld)) {
			t.Errorf("Skip: handled %v, stats %+v; want 1 handled and %d held", got, s, tc.wantHeld)
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
