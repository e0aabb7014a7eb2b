package peers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ordergen/ordergen/benchmarks/benchevents"
)

// generatedPeer is what users of ordergen run: the dispatcher generated from
// the benchmarks' schema (../schema.yaml, package benchevents). Each event
// goes through the generated Publish method (its checks, the envelope that
// carries it by value, the topic), the engine with the schema's
// policies (the 5s timeout per attempt, retries, parking), and the generated
// handler with its version guard on the in-memory store (a read before the
// handler, a compare-and-set after it).
type generatedPeer struct {
	d *benchevents.ItemDispatcher
}

// ItemHandler returns h as the generated ItemHandler: it calls h with the
// Event that Submitted carries (ToSubmitted's inverse) and succeeds.
func ItemHandler(h Handler) benchevents.ItemHandler { return itemHandler{h} }

// ToSubmitted returns the generated event that carries ev of key. Its
// version is ev's sequence number among its key's events, so the version
// guard applies every event of a run.
func ToSubmitted(key string, ev Event) benchevents.Submitted {
	return benchevents.Submitted{Key: key, Seq: uint64(ev.Seq), KeyIndex: ev.Key, Index: ev.Index}
}

// itemHandler is ItemHandler's result.
type itemHandler struct{ h Handler }

func (ih itemHandler) HandleSubmitted(_ context.Context, e benchevents.Submitted) error {
	ih.h(e.Key, Event{Key: e.KeyIndex, Seq: uint32(e.Seq), Index: e.Index})
	return nil
}

// NewGenerated returns the generated ItemDispatcher with the schema's
// policies (a blocking backlog of Capacity events, per key and in all, so
// nothing is rejected) and MaxActive set to workers.
func NewGenerated(h Handler, workers int) (Peer, error) {
	d, err := benchevents.NewItemDispatcher(itemHandler{h}, func(c *benchevents.ItemConfig) {
		c.MaxActive = workers
		c.Logger = slog.New(slog.DiscardHandler)
	})
	if err != nil {
		return nil, fmt.Errorf("generated: %w", err)
	}
	return &generatedPeer{d: d}, nil
}

func (p *generatedPeer) Submit(ctx context.Context, key string, ev Event) error {
	return p.d.PublishSubmitted(ctx, ToSubmitted(key, ev))
}

func (p *generatedPeer) Drain(ctx context.Context) error {
	if err := p.d.Flush(ctx); err != nil {
		return fmt.Errorf("generated: flush: %w", err)
	}
	return nil
}

// Close closes the dispatcher and checks that its one subscriber handled
// every event it accepted at the first attempt: none was retried, skipped by
// the guard, parked or dropped.
func (p *generatedPeer) Close(ctx context.Context) error {
	if err := p.d.Close(ctx); err != nil {
		return fmt.Errorf("generated: close: %w", err)
	}
	st := p.d.Stats()["Item"]
	if st.Handled != st.Accepted || st.Retried != 0 {
		return fmt.Errorf("generated: events not simply handled: %+v", st)
	}
	return nil
}
