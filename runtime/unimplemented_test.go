package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

// skipBySeq is a handler's verdict for an event by its sequence number: a
// guard's skip (seq%4 == 1), an unimplemented event's acknowledgement,
// plain or applied (seq%4 == 2 and 3), or success.
func skipBySeq(seq int) error {
	switch seq % 4 {
	case 1:
		return runtime.Skip("late transition")
	case 2:
		return runtime.Skip(genimpl.ReasonUnimplemented)
	case 3:
		return runtime.SkipApplied(genimpl.ReasonUnimplemented)
	}
	return nil
}

// Stats.Unimplemented counts the skips with ReasonUnimplemented, a part of
// Skipped, so that an unimplemented event's acknowledgement is told from a
// guard's skip: on events run inline (keys without a lane), in lanes, and
// through a batch handler's verdicts.
func TestStatsTellUnimplementedFromGuardSkips(t *testing.T) {
	const keys, perKey = 8, 40 // seq 1..40: 10 of each verdict per key
	check := func(t *testing.T, s runtime.Stats) {
		t.Helper()
		if s.Skipped != keys*30 || s.Unimplemented != keys*20 || s.Handled != keys*10 {
			t.Fatalf("skipped %d (unimplemented %d), handled %d; want %d (%d), %d", s.Skipped, s.Unimplemented, s.Handled, keys*30, keys*20, keys*10)
		}
		checkInvariant(t, s)
	}
	submitAll := func(t *testing.T, e *runtime.Engine[string, ev]) {
		ctx := context.Background()
		for seq := 1; seq <= perKey; seq++ {
			for k := range keys {
				if err := e.Submit(ctx, string(rune('a'+k)), ev{Seq: seq}); err != nil {
					t.Fatal(err)
				}
			}
		}
		flush(t, e)
	}
	t.Run("one at a time", func(t *testing.T) {
		e := mustNew(t, func(_ context.Context, _ string, x ev) error { return skipBySeq(x.Seq) }, runtime.Config[string, ev]{})
		submitAll(t, e)
		check(t, e.Stats())
	})
	t.Run("in lanes", func(t *testing.T) {
		// A failed first attempt gives each key a lane.
		var mu sync.Mutex
		failed := map[string]bool{}
		e := mustNew(t, func(_ context.Context, key string, x ev) error {
			mu.Lock()
			first := !failed[key]
			failed[key] = true
			mu.Unlock()
			if first {
				return errors.New("first attempt fails")
			}
			return skipBySeq(x.Seq)
		}, runtime.Config[string, ev]{Retry: fastRetry})
		submitAll(t, e)
		check(t, e.Stats())
	})
	t.Run("batch verdicts", func(t *testing.T) {
		e := mustNewBatch(t, func(_ context.Context, _ string, events []ev) error {
			verdicts := make([]error, len(events))
			for i, x := range events {
				verdicts[i] = skipBySeq(x.Seq)
			}
			return genimpl.Verdicts(verdicts)
		}, runtime.Config[string, ev]{BatchSize: 8})
		submitAll(t, e)
		check(t, e.Stats())
	})
}
