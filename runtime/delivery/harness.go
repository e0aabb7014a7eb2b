package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

// Event is what a harness needs of an entity's events: their key and name
// (and, for an entity with a version, an EventVersion method).
type Event[K comparable] interface {
	EventKey() K
	EventName() string
}

// Dispatcher is what a harness drives: a generated dispatcher.
type Dispatcher[E any] interface {
	Publish(ctx context.Context, e E) error
	Flush(ctx context.Context) error
	Close(ctx context.Context) error
}

// HarnessSpec is what a generated test kit tells NewHarness of its entity.
type HarnessSpec[K comparable, E Event[K], D Dispatcher[E]] struct {
	// Kit and Entity name the test kit's package and the entity, in errors.
	Kit, Entity string
	// Guard says what the entity's guards repair (its MaxHeld is taken from
	// the dispatcher's configuration).
	Guard Guard
	// Snapshot tells the events that carry a key's whole state; nil: none.
	Snapshot func(E) bool
	// Stats returns the counters of the dispatcher's first subscriber.
	Stats func(D) runtime.Stats
}

// Harness delivers an entity's events through a real dispatcher (its
// lanes and its guards) in the order a Chaos plan gives, and reports what
// was sent and what the guards skipped. A generated test kit names it for
// each entity (the <Entity>Harness types) and starts it with NewHarness.
// Close it when done.
type Harness[K comparable, E Event[K], D Dispatcher[E]] struct {
	spec  HarnessSpec[K, E, D]
	d     D
	guard Guard
	skips Skips[E] // what the guards skipped, told by OnSkip
}

// NewHarness starts a harness on the dispatcher that start returns when
// given the harness's option: the schema's policies changed by the
// caller's options, except that a full backlog blocks the harness
// (runtime.Block), so that every delivery is accepted; the subscriber's
// OnSkip also records the guards' skips for the reports (an OnSkip set
// before is still told).
func NewHarness[K comparable, E Event[K], D Dispatcher[E]](spec HarnessSpec[K, E, D], start func(genimpl.Option[K, E]) (D, error)) (*Harness[K, E, D], error) {
	h := &Harness[K, E, D]{spec: spec, guard: spec.Guard}
	d, err := start(func(c *genimpl.Config[K, E]) {
		c.Backlog.WhenFull = runtime.Block
		told := c.OnSkip
		c.OnSkip = func(key K, ev E, reason string) {
			h.skips.Add(ev, reason)
			if told != nil {
				told(key, ev, reason)
			}
		}
		if h.guard.Versioned {
			h.guard.MaxHeld = c.MaxHeld
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: new %sHarness: %w", spec.Kit, spec.Entity, err)
	}
	h.d = d
	return h, nil
}

// Dispatcher returns the harness's dispatcher, for its Stats, ParkedKeys,
// Replay and the rest.
func (h *Harness[K, E, D]) Dispatcher() D { return h.d }

// Deliver plans a delivery of events, given in publication order, with c,
// publishes it from the calling goroutine, and waits until every event has
// an outcome (or is parked). The same events and c always give the same
// delivery. Pointers to events are delivered as the events they point to.
// The report holds what was sent, the subscriber's Stats and what the
// guards skipped. It returns an error wrapping ErrUnrepairable for a Chaos
// the entity's guards cannot repair, and an error for a nil event or a
// failed publish.
func (h *Harness[K, E, D]) Deliver(ctx context.Context, events []E, c Chaos) (Report[E], error) {
	values := make([]E, len(events))
	for i, e := range events {
		v, ok := Value(e)
		if !ok {
			return Report[E]{}, fmt.Errorf("%s: deliver %s events: event %d is nil", h.spec.Kit, h.spec.Entity, i)
		}
		values[i] = v
	}
	plan, err := Plan(values, E.EventKey, h.spec.Snapshot, h.guard, c)
	if err != nil {
		return Report[E]{}, fmt.Errorf("%s: deliver %s events: %w", h.spec.Kit, h.spec.Entity, err)
	}
	h.skips.Take() // an earlier delivery's
	if err := Run(ctx, plan, h.d.Publish, h.d.Flush); err != nil {
		return Report[E]{Sent: plan}, fmt.Errorf("%s: deliver %s events with %v: %w", h.spec.Kit, h.spec.Entity, c, err)
	}
	return Report[E]{Sent: plan, Stats: h.spec.Stats(h.d), Skips: h.skips.Take()}, nil
}

// ApplyInOrder delivers events once each, in publication order (Deliver
// with the zero Chaos), and fails with an error wrapping
// ErrSkippedInOrder, which names each event with its key (and version) and
// the guard's reason, when the guards skip any of them but for a reason in
// allow. In publication order a skip is almost always a schema mistake (an
// event that happens within a state moving to it with to: instead of
// taking in:), and a delivery with any Chaos goes through the same guards,
// skips the same event and so agrees with it: the in-order run is the
// oracle, so it catches the mistake here. A test names the reasons of the
// skips it means in allow (a late event published on purpose: "late
// transition: state Open ranks below Frozen"; a repeated event of an
// entity without a version: "duplicate: already in state Placed").
func (h *Harness[K, E, D]) ApplyInOrder(ctx context.Context, events []E, allow ...string) (Report[E], error) {
	report, err := h.Deliver(ctx, events, Chaos{})
	if err != nil {
		return report, err
	}
	if err := InOrder(report.Skips, allow, describe[K, E]); err != nil {
		return report, fmt.Errorf("%s: apply %s events in order: %w", h.spec.Kit, h.spec.Entity, err)
	}
	return report, nil
}

// describe names an event with its key, and its version when it has one.
func describe[K comparable, E Event[K]](e E) string {
	if v, ok := any(e).(interface{ EventVersion() uint64 }); ok {
		return fmt.Sprintf("%s (key %#v, version %d)", e.EventName(), e.EventKey(), v.EventVersion())
	}
	return fmt.Sprintf("%s (key %#v)", e.EventName(), e.EventKey())
}

// Close closes the harness's dispatcher (see its Close).
func (h *Harness[K, E, D]) Close(ctx context.Context) error {
	return h.d.Close(ctx)
}

// ApplyInOrderAndClose is ApplyInOrder without allowed skips, then Close:
// what a test kit's Apply<Entity>InOrder does with a new harness.
func (h *Harness[K, E, D]) ApplyInOrderAndClose(ctx context.Context, events []E) error {
	_, err := h.ApplyInOrder(ctx, events)
	return errors.Join(err, h.Close(ctx))
}
