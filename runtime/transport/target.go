package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
)

// The transport contract: what a broker's consumer (runtime/kafka's, and
// the other brokers' and the outbox relay's after it) feeds, and how it
// checks what it feeds. A Source (source.go) does the bookkeeping on top of
// a Target; an OrderedSink (orderedsink.go) is the producing side.

// Keyed is an event that knows its ordering key. Generated event interfaces
// (AccountEvent) are Keyed.
type Keyed[K comparable] interface {
	EventKey() K
}

// Target is what a transport feeds: per-key lanes with one or more
// subscribers. A generated dispatcher is a Target; EngineTarget and
// TopicTarget adapt an Engine and a Topic.
type Target[E any] interface {
	// SubmitTagged hands event, with tag, to the subscribers numbered from
	// and up (in subscription order) and returns how many subscribers hold
	// it afterwards. Each of them later reports the event's outcome, with
	// tag, to its Config.OnOutcome. At the first subscriber that refuses the
	// event it stops and returns the refusal; call it again with from set to
	// the number returned, so that no subscriber gets an event twice.
	SubmitTagged(ctx context.Context, event E, tag uint64, from int) (int, error)
	// Withdraw takes back, in every subscriber, the events whose tag match
	// selects and that have not started (see runtime.TransportEngine.Withdraw); it cancels
	// the running attempts of selected events when ctx ends first.
	Withdraw(ctx context.Context, match func(tag uint64) bool) (int, error)
	// Subscriptions describes the subscribers, in subscription order, for
	// the checks a transport makes before it feeds them (CheckSubscriptions).
	Subscriptions() []Subscription
}

// Subscription describes one subscriber of a Target: what a transport must
// know of it to settle its messages correctly.
type Subscription struct {
	// Name is the subscriber's Config.Name.
	Name string
	// WhenFull is its backlog policy.
	WhenFull runtime.FullPolicy
	// ParksInMemory reports that its parked events live in its memory
	// (Config.Parks nil): they die with the process, so a parked event is
	// not finished for a transport, and a replay or discard reports its
	// final outcome with the event's tag.
	ParksInMemory bool
	// ReportsOutcomes reports that Config.OnOutcome is set.
	ReportsOutcomes bool
	// Tracer is its Config.Tracer: a Source links its messages' trace
	// contexts into it when it is a Linker.
	Tracer runtime.Tracer
}

// SubscriptionOf describes engine as a subscriber of a transport.
func SubscriptionOf[K comparable, E any](engine *runtime.Engine[K, E]) Subscription {
	cfg := engine.Config()
	return Subscription{
		Name:            cfg.Name,
		WhenFull:        cfg.Backlog.WhenFull,
		ParksInMemory:   runtime.EngineForTransport(engine).ParksInMemory(),
		ReportsOutcomes: cfg.OnOutcome != nil,
		Tracer:          cfg.Tracer,
	}
}

// TopicSubscriptions describes every subscriber of topic, in subscription
// order, for a transport's checks (see CheckSubscriptions).
func TopicSubscriptions[K comparable, E any](topic *runtime.Topic[K, E]) []Subscription {
	subs := topic.Subscribers()
	out := make([]Subscription, len(subs))
	for i, s := range subs {
		out[i] = SubscriptionOf(s)
	}
	return out
}

// CheckSubscriptions refuses, with an error wrapping ErrInvalidConfig,
// subscribers a transport cannot settle messages for, and reports whether
// their parked events live in memory:
//   - none at all: a message would go nowhere and count as finished;
//   - one without Config.OnOutcome: the transport would never learn that
//     its messages finished;
//   - one under the drop-oldest or drop-newest backlog policy: a dropped
//     event reports an outcome that finishes its message, so the broker
//     would forget a message no handler ran;
//   - some parking in memory and some in a store: a Parked outcome is
//     final for the latter and not for the former, and outcomes do not say
//     which subscriber sent them.
func CheckSubscriptions(subs []Subscription) (parksInMemory bool, err error) {
	if len(subs) == 0 {
		return false, fmt.Errorf("%w: %w: a message would go nowhere", runtime.ErrInvalidConfig, runtime.ErrNoSubscribers)
	}
	var errs []error
	for _, s := range subs {
		if !s.ReportsOutcomes {
			errs = append(errs, fmt.Errorf("subscriber %q has no OnOutcome: the transport would never learn that its messages finished", s.Name))
		}
		if s.WhenFull == runtime.DropOldest || s.WhenFull == runtime.DropNewest {
			errs = append(errs, fmt.Errorf("subscriber %q uses the %s backlog policy: a dropped event would let the transport acknowledge a message no handler ran; use block, reject or timeout (the transport then pauses its source)", s.Name, s.WhenFull))
		}
		if s.ParksInMemory != subs[0].ParksInMemory {
			errs = append(errs, fmt.Errorf("subscribers %q and %q park differently (one in memory, one in a store): give every subscriber a park store, or none", subs[0].Name, s.Name))
		}
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("%w: %w", runtime.ErrInvalidConfig, errors.Join(errs...))
	}
	return subs[0].ParksInMemory, nil
}

// EngineTarget returns a Target that feeds engine, a single subscriber
// whose Config.OnOutcome must be the transport's.
func EngineTarget[K comparable, E Keyed[K]](engine *runtime.Engine[K, E]) Target[E] {
	return engineTarget[K, E]{engine}
}

type engineTarget[K comparable, E Keyed[K]] struct{ e *runtime.Engine[K, E] }

func (t engineTarget[K, E]) SubmitTagged(ctx context.Context, event E, tag uint64, from int) (int, error) {
	if from >= 1 {
		return 1, nil
	}
	if err := runtime.EngineForTransport(t.e).SubmitTagged(ctx, event.EventKey(), event, tag); err != nil {
		return 0, err
	}
	return 1, nil
}

func (t engineTarget[K, E]) Withdraw(ctx context.Context, match func(uint64) bool) (int, error) {
	return runtime.EngineForTransport(t.e).Withdraw(ctx, match)
}

func (t engineTarget[K, E]) Subscriptions() []Subscription {
	return []Subscription{SubscriptionOf(t.e)}
}

// TopicTarget returns a Target that feeds every subscriber of topic, each
// of which must report to the transport's OnOutcome. Generated dispatchers
// are Targets themselves.
func TopicTarget[K comparable, E Keyed[K]](topic *runtime.Topic[K, E]) Target[E] {
	return topicTarget[K, E]{topic}
}

type topicTarget[K comparable, E Keyed[K]] struct{ t *runtime.Topic[K, E] }

func (t topicTarget[K, E]) SubmitTagged(ctx context.Context, event E, tag uint64, from int) (int, error) {
	return runtime.TopicForTransport(t.t).SubmitTagged(ctx, event.EventKey(), event, tag, from)
}

func (t topicTarget[K, E]) Withdraw(ctx context.Context, match func(uint64) bool) (int, error) {
	return runtime.TopicForTransport(t.t).Withdraw(ctx, match)
}

func (t topicTarget[K, E]) Subscriptions() []Subscription { return TopicSubscriptions(t.t) }
