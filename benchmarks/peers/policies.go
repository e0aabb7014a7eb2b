package peers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/benchmarks/benchevents"
	"github.com/ordergen/ordergen/runtime"
)

// policiesPeer is the ordergen engine with, written by hand, what the
// generated peer adds to it: the benchmarks' schema's policies (a 5s
// timeout per attempt, its retries, parking, the resequencer's bounds) and
// a version guard on the runtime's in-memory version store that decides as
// the generated one does (a read before the handler: skip a stale version,
// hold one past a gap; a compare-and-set after it). Its engine carries the
// generated peer's event, benchevents.Submitted, by value, as an engine of
// a user's own event type does. Against the generated peer, it tells the
// generated code's own cost apart from the cost of what the schema asks
// for.
type policiesPeer struct {
	e *runtime.Engine[string, benchevents.Submitted]
}

// NewPolicies returns the ordergen engine with the schema's policies and a
// hand-written version guard, MaxActive set to workers and a blocking
// backlog of Capacity events.
func NewPolicies(h Handler, workers int) (Peer, error) {
	versions := runtime.NewMemoryVersionStore[string]()
	handle := func(ctx context.Context, key string, e benchevents.Submitted) error {
		stored, err := versions.Version(ctx, key)
		if err != nil {
			return err
		}
		switch {
		case e.Seq <= stored:
			return runtime.Skip("duplicate or stale version")
		case e.Seq > stored+1:
			return runtime.Hold("version gap")
		}
		h(e.Key, Event{Key: e.KeyIndex, Seq: uint32(e.Seq), Index: e.Index})
		ok, err := versions.CompareAndSet(ctx, key, stored, e.Seq)
		switch {
		case err != nil:
			return fmt.Errorf("policies: key %s: store version %d: %w", key, e.Seq, err)
		case !ok:
			return fmt.Errorf("policies: key %s: version moved from %d by another writer", key, stored)
		}
		return nil
	}
	e, err := runtime.New(handle, runtime.Config[string, benchevents.Submitted]{
		Name:        "bench",
		MaxActive:   workers,
		Backlog:     runtime.Backlog{PerKey: Capacity, Total: Capacity, WhenFull: runtime.Block},
		Retry:       runtime.Retry{Attempts: 5, Initial: 10 * time.Millisecond, Max: 2 * time.Second, Multiplier: 2},
		Timeout:     5 * time.Second,
		OnExhausted: runtime.ParkKey,
		MaxHeld:     64,
		MaxHold:     30 * time.Second,
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	return &policiesPeer{e: e}, nil
}

func (p *policiesPeer) Submit(ctx context.Context, key string, ev Event) error {
	return p.e.Submit(ctx, key, ToSubmitted(key, ev))
}

func (p *policiesPeer) Drain(ctx context.Context) error {
	if err := p.e.Flush(ctx); err != nil {
		return fmt.Errorf("policies: flush: %w", err)
	}
	return nil
}

// Close closes the engine and checks that it handled every event it
// accepted at the first attempt, as the generated peer's Close does: none
// retried, skipped or parked.
func (p *policiesPeer) Close(ctx context.Context) error {
	if err := p.e.Close(ctx); err != nil {
		return fmt.Errorf("policies: close: %w", err)
	}
	st := p.e.Stats()
	if st.Handled != st.Accepted || st.Retried != 0 {
		return fmt.Errorf("policies: events not simply handled: %+v", st)
	}
	return nil
}
