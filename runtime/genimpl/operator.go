package genimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/transport"
)

// The dispatcher's methods for the service that runs it, its operators and
// its transports. Subscribers are named by the generated name type N: the
// first subscriber by the entity's name (AccountFirstSubscriber), the
// others by the entity's name, a slash and the name Subscribe was given
// (AccountSubscriberNamed).

// Publish hands any event of the entity (or a pointer to one) to every
// subscriber of the dispatcher, as the generated Publish method of its type
// does. It refuses, with an error wrapping runtime.ErrInvalidEvent, a nil
// event, an event with an empty key or a version below 1; the runtime's
// errors (runtime.ErrBacklogFull, runtime.ErrClosed) say why an event was
// not accepted.
func (d *Dispatcher[K, E, B, N]) Publish(ctx context.Context, e E) error {
	key, v, err := d.en.envelope(e, d.textKey)
	if err != nil {
		return err
	}
	return d.topic.Publish(ctx, key, v)
}

// Flush waits until every event published before the call has an outcome,
// or is held back on a version gap or parked, in every subscriber, or until
// ctx ends.
func (d *Dispatcher[K, E, B, N]) Flush(ctx context.Context) error {
	if err := d.topic.Flush(ctx); err != nil {
		return fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return nil
}

// Replay re-runs, in order, the parked events of key in every subscriber
// where key is parked, and unparks it where all succeed. It returns an
// error wrapping runtime.ErrNotParked when key is parked nowhere.
func (d *Dispatcher[K, E, B, N]) Replay(ctx context.Context, key K) error {
	if err := d.topic.Replay(ctx, key); err != nil {
		return fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return nil
}

// Discard removes the parked events of key in every subscriber where key is
// parked (their outcome: runtime.Discarded), unparks it, and returns how
// many events it removed. It returns an error wrapping runtime.ErrNotParked
// when key is parked nowhere.
func (d *Dispatcher[K, E, B, N]) Discard(ctx context.Context, key K) (int, error) {
	n, err := d.topic.Discard(ctx, key)
	if err != nil {
		return n, fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return n, nil
}

// CancelAttempt ends, in every subscriber where a handler of key is in an
// attempt, that attempt's context with cause (nil:
// runtime.ErrOperatorCancel), which the handler sees as
// context.Cause(ctx); the retry policy, then the park, follow. It returns an
// error wrapping runtime.ErrNotRunning when no attempt of key runs
// anywhere.
func (d *Dispatcher[K, E, B, N]) CancelAttempt(key K, cause error) error {
	if err := d.topic.CancelAttempt(key, cause); err != nil {
		return fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return nil
}

// ParkNow parks key now with its pending events, in order, under reason
// (empty: "parked by an operator"), in every subscriber where it has any,
// and returns how many events it parked. A handler of key in an attempt is
// withdrawn: its event parks first, and what it returns is ignored (see
// runtime.Engine.ParkNow). It returns an error wrapping
// runtime.ErrNothingPending when key has no pending event anywhere.
func (d *Dispatcher[K, E, B, N]) ParkNow(ctx context.Context, key K, reason string) (int, error) {
	n, err := d.topic.ParkNow(ctx, key, reason)
	if err != nil {
		return n, fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return n, nil
}

// ParkedKeys returns the parked keys of every subscriber that has any, by
// subscriber.
func (d *Dispatcher[K, E, B, N]) ParkedKeys(ctx context.Context) (map[N][]runtime.ParkedKey[K], error) {
	keys, err := d.topic.ParkedKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return bySubscriber[N](keys), nil
}

// ParkedEvents returns, in order, the events parked for key in the
// subscriber named subscriber.
func (d *Dispatcher[K, E, B, N]) ParkedEvents(ctx context.Context, subscriber N, key K) ([]runtime.ParkedEvent[E], error) {
	s, ok := d.topic.Subscriber(string(subscriber))
	if !ok {
		_, err := d.subscriber(subscriber)
		return nil, err
	}
	events, err := s.ParkedEvents(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%s: parked events of %v in %s: %w", d.en.Package, key, subscriber, err)
	}
	out := make([]runtime.ParkedEvent[E], len(events))
	for i := range events {
		out[i] = parkedEvent(events[i], d.en.event(&events[i].Event))
	}
	return out, nil
}

// Health returns nil when no subscriber has a key whose oldest pending
// event is older than age, and otherwise the subscribers'
// *runtime.StuckError joined: a readiness probe or an alert can use it as
// it is.
func (d *Dispatcher[K, E, B, N]) Health(age time.Duration) error { return d.topic.Health(age) }

// TopBacklog returns, by subscriber, up to n keys with the largest backlog
// in each subscriber that has any, with the age of their oldest pending
// event: a rising age on steady traffic means a hot or stuck key.
func (d *Dispatcher[K, E, B, N]) TopBacklog(n int) map[N][]runtime.KeyBacklog[K] {
	return bySubscriber[N](d.topic.TopBacklog(n))
}

// Stuck returns, by subscriber, the keys whose oldest pending event is
// older than age, in each subscriber that has any (what Health reports).
func (d *Dispatcher[K, E, B, N]) Stuck(age time.Duration) map[N][]runtime.KeyBacklog[K] {
	return bySubscriber[N](d.topic.Stuck(age))
}

// Stats returns a snapshot of the counters of each subscriber, by
// subscriber. Every subscriber sees every published event, so counters are
// per subscriber; add them up only knowing that.
func (d *Dispatcher[K, E, B, N]) Stats() map[N]runtime.Stats {
	return bySubscriber[N](d.topic.Stats())
}

// bySubscriber returns m, a map of the runtime's by subscriber name, keyed
// by the generated name type.
func bySubscriber[N ~string, V any](m map[string]V) map[N]V {
	out := make(map[N]V, len(m))
	for name, v := range m {
		out[N(name)] = v
	}
	return out
}

// Version is a generated dispatcher's Version: the last version of key
// that the subscriber named subscriber applied, 0 when none yet, as its
// version guard stores it (in the durable store of a transactional one).
func Version[K comparable, E Event[K], B any, N ~string](ctx context.Context, d *Dispatcher[K, E, B, N], subscriber N, key K) (uint64, error) {
	s, err := d.subscriber(subscriber)
	if err != nil {
		return 0, err
	}
	if s.versions == nil {
		return 0, fmt.Errorf("%s: %s has no version", d.en.Package, d.en.Name)
	}
	v, err := s.versions.Version(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("%s: version of %v in %s: %w", d.en.Package, key, subscriber, err)
	}
	return v, nil
}

// State is a generated dispatcher's State: the current state of key in the
// subscriber named subscriber, "" when no event set one yet, as its state
// guard stores it.
func State[S ~string, K comparable, E Event[K], B any, N ~string](ctx context.Context, d *Dispatcher[K, E, B, N], subscriber N, key K) (S, error) {
	s, err := d.subscriber(subscriber)
	if err != nil {
		return "", err
	}
	if s.states == nil {
		return "", fmt.Errorf("%s: %s has no states", d.en.Package, d.en.Name)
	}
	state, err := s.states.State(ctx, key)
	if err != nil {
		return "", fmt.Errorf("%s: state of %v in %s: %w", d.en.Package, key, subscriber, err)
	}
	return S(state), nil
}

// Inspector returns the operator's view of the dispatcher, for
// github.com/ordergen/ordergen/runtime/console: each subscriber's
// counters, largest backlogs, stuck and parked keys, and its parked events
// a page at a time, with keys as text and events as the entity's codec's
// JSON, and the version and state its guards store for a key, for an
// entity that has them. Its Replay and Discard act on one subscriber.
func (d *Dispatcher[K, E, B, N]) Inspector() inspect.Inspector {
	v := inspect.Engines[K, B]{Name: d.en.Name, Engines: d.topic.Subscribers, Codec: envCodec[K, E, B]{d.en}}
	if d.en.versioned() {
		v.Version = func(ctx context.Context, subscriber string, key K) (uint64, error) {
			return Version(ctx, d, N(subscriber), key)
		}
		v.EventVersion = func(e B) (uint64, bool) { return d.en.versionOf(&e), true }
	}
	if d.en.stated() {
		v.State = func(ctx context.Context, subscriber string, key K) (string, error) {
			return State[string](ctx, d, N(subscriber), key)
		}
	}
	return v
}

// SubmitTagged hands e, with tag, to the subscribers numbered from and up
// (0 is the first, in subscription order), for transports such as the
// Kafka consumer of github.com/ordergen/ordergen/runtime/kafka: each
// subscriber reports e's outcome with tag to the OnOutcome of its Config,
// so a record is finished when every subscriber that holds it reported. It
// returns how many subscribers hold e afterwards. It stops at the first
// subscriber that refuses e (runtime.ErrBacklogFull, runtime.ErrClosed,
// ctx's error) and returns the refusal: call it again with from set to the
// number returned, so that no subscriber gets e twice. It refuses, before
// any subscriber gets it, what Publish refuses (runtime.ErrInvalidEvent),
// and refuses everything with runtime.ErrInvalidConfig while a subscriber
// has no OnOutcome: its transport would never learn that its events
// finished.
func (d *Dispatcher[K, E, B, N]) SubmitTagged(ctx context.Context, e E, tag uint64, from int) (int, error) {
	key, v, err := d.en.envelope(e, d.textKey)
	if err != nil {
		return from, err
	}
	n, err := runtime.TopicForTransport(d.topic).SubmitTagged(ctx, key, v, tag, from)
	if err != nil {
		return n, fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return n, nil
}

// Withdraw takes back, in every subscriber, the events given to
// SubmitTagged whose tag match selects and that have not started, for a
// transport that no longer owns where they came from (a Kafka partition
// that moved to another consumer): they never start and report
// runtime.Withdrawn. It waits for the selected events that running lanes
// took, and when ctx ends first it cancels their attempts' contexts and
// returns ctx's error (see runtime.TransportEngine.Withdraw). It returns how many
// events it withdrew.
func (d *Dispatcher[K, E, B, N]) Withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	n, err := runtime.TopicForTransport(d.topic).Withdraw(ctx, match)
	if err != nil {
		return n, fmt.Errorf("%s: %w", d.en.Package, err)
	}
	return n, nil
}

// Subscriptions describes the subscribers, in subscription order, for the
// checks a transport makes before it feeds the dispatcher
// (transport.CheckSubscriptions: every subscriber reports outcomes, none
// drops events, all park alike).
func (d *Dispatcher[K, E, B, N]) Subscriptions() []transport.Subscription {
	return transport.TopicSubscriptions(d.topic)
}

// PublishBody is a generated typed publisher (PublishDeposited) of an
// event of key, kind and version whose type travels by value: b, the
// entity's body, holds it, so that publishing it boxes nothing. It refuses
// what Publish refuses.
func PublishBody[K comparable, E Event[K], B any, N ~string](ctx context.Context, d *Dispatcher[K, E, B, N], key K, kind int, version uint64, b B) error {
	if err := d.en.refuse(kind, key, version, d.textKey); err != nil {
		return err
	}
	return d.topic.Publish(ctx, key, b)
}
