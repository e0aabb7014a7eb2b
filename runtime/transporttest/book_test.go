package transporttest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// The book finds what a transport can get wrong: an event applied before
// its predecessor, two handlers of a key at once; and counts duplicates.
func TestBookFindsSkipsOverlapsAndDuplicates(t *testing.T) {
	b := newBook()
	done := b.reached(3)
	for _, e := range []Event{{"a", 1}, {"a", 2}, {"b", 1}} {
		if !b.apply("m", e) {
			t.Fatalf("%+v not applied", e)
		}
	}
	select {
	case <-done:
	default:
		t.Fatal("reached(3) not closed after three events")
	}
	if b.apply("m", Event{"a", 1}) {
		t.Error("a duplicate was applied")
	}
	if b.apply("m", Event{"a", 4}) {
		t.Error("an event after a gap was applied")
	}
	b.giveUp(Event{"b", 2})
	if !b.apply("m", Event{"b", 3}) {
		t.Error("the event after one given up was not applied")
	}
	// Two handlers of c at once: an overlap, unfenced while the first one's
	// context lives; fenced once it ended.
	live, cancel := context.WithCancel(context.Background())
	end1 := b.begin(live, Event{"c", 1})
	end2 := b.begin(context.Background(), Event{"c", 2})
	end2()
	cancel()
	end3 := b.begin(context.Background(), Event{"c", 2})
	end3()
	end1()
	if b.running["c"] != nil {
		t.Errorf("handlers of c still running after they ended: %v", b.running["c"])
	}
	st := b.state()
	if st.applied != 4 || st.dups != 1 || len(st.skips) != 1 || len(st.overlaps) != 2 || len(st.unfenced) != 1 {
		t.Errorf("state %+v: want 4 applied, 1 duplicate, 1 skip, 2 overlaps, one of them unfenced", st)
	}
	if got := b.lastOf("a"); got != 2 {
		t.Errorf("lastOf(a) = %d", got)
	}
}

// The watched target counts what the engine holds: a parked event in
// memory is still held, an event with a final outcome is not.
func TestWatchedCountsHeldEvents(t *testing.T) {
	var w *watched
	gate := make(chan struct{})
	e, err := runtime.New(func(ctx context.Context, key string, ev Event) error {
		if key == "park" {
			return runtime.Permanent(context.Canceled)
		}
		<-gate
		return nil
	}, runtime.Config[string, Event]{
		Logger:    slog.New(slog.DiscardHandler),
		Retry:     runtime.Retry{Attempts: 1},
		OnOutcome: func(_ string, tag uint64, o runtime.Outcome) { w.outcome(tag, o) },
	})
	if err != nil {
		t.Fatal(err)
	}
	w = watch(transport.EngineTarget(e), runtime.EngineForTransport(e).ParksInMemory())
	ctx := context.Background()
	for tag, ev := range []Event{{"a", 1}, {"a", 2}, {"park", 1}} {
		if _, err := w.SubmitTagged(ctx, ev, uint64(tag+1), 0); err != nil {
			t.Fatal(err)
		}
	}
	<-w.holding(3)
	close(gate)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if held, most, _, _ := w.counts(); held != 1 || most != 3 {
		t.Errorf("held %d (most %d), want 1 (the parked event) and 3", held, most)
	}
	if _, err := w.Withdraw(ctx, func(uint64) bool { return true }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.withdrawn:
	default:
		t.Error("Withdraw not noticed")
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// The logs signal records at Warn or above, not below.
func TestLogsSignalWarnings(t *testing.T) {
	l := newLogs()
	lg := l.logger().With("k", "v")
	lg.Info("info")
	ch := l.warned(1)
	select {
	case <-ch:
		t.Fatal("an info record counted as a warning")
	default:
	}
	lg.Warn("warn")
	<-ch
	if n := l.warnCount(); n != 1 {
		t.Errorf("%d warnings", n)
	}
}
