package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Engines is the Inspector of the engines of one entity that run in this
// process: a generated dispatcher's subscribers (its Inspector method
// returns one), a runtime.Topic's, or a single engine. Keys go through
// durable.EncodeKey and DecodeKey, so K must be a string or an integer type;
// events through Codec. Replay and Discard act on the named subscriber's
// engine and wait for it (see runtime.Engine.Replay): give them a context
// with a deadline.
type Engines[K comparable, E any] struct {
	// Name is the entity's name.
	Name string
	// Engines returns the subscribers' engines in subscription order: a
	// runtime.Topic's Subscribers method, or a function that returns a
	// service's own engines. An engine is named by its Config.Name.
	Engines func() []*runtime.Engine[K, E]
	// Codec encodes parked events for people to read. Nil: an event's JSON
	// (encoding/json), named after its Go type.
	Codec durable.Codec[E]
	// Version, when set, returns the last version of key that the
	// subscriber applied (a generated dispatcher's Version method).
	Version func(ctx context.Context, subscriber string, key K) (uint64, error)
	// State, when set, returns the current state of key in the subscriber
	// (a generated dispatcher's State method).
	State func(ctx context.Context, subscriber string, key K) (string, error)
	// EventVersion, when set, returns the version an event carries, false
	// for none (a generated dispatcher's, whose engines carry bodies).
	// Nil: the event's EventVersion method, when it has one.
	EventVersion func(E) (uint64, bool)
}

var (
	_ Inspector   = Engines[string, int]{}
	_ KeyOperator = Engines[string, int]{}
)

// firstPage is how many of a park's first events ParkedKeys reads to find
// the event that parked the key.
const firstPage = 16

// Entity implements Inspector.
func (v Engines[K, E]) Entity() string { return v.Name }

func (v Engines[K, E]) engines() []*runtime.Engine[K, E] {
	if v.Engines == nil {
		return nil
	}
	return v.Engines()
}

// engine returns the subscriber named name.
func (v Engines[K, E]) engine(name string) (*runtime.Engine[K, E], error) {
	for _, e := range v.engines() {
		if e.Config().Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: %s has no subscriber named %q", ErrNotFound, v.Name, name)
}

// key parses a key's text.
func (v Engines[K, E]) key(text string) (K, error) {
	k, err := durable.DecodeKey[K](text)
	if err != nil {
		return k, fmt.Errorf("%s: %w", v.Name, err)
	}
	return k, nil
}

// text returns a key's text.
func text[K comparable](key K) string {
	s, err := durable.EncodeKey(key)
	if err != nil {
		return fmt.Sprint(key)
	}
	return s
}

// Subscribers implements Inspector.
func (v Engines[K, E]) Subscribers(_ context.Context, q Query) ([]Subscriber, error) {
	var out []Subscriber
	for _, e := range v.engines() {
		cfg := e.Config()
		st := e.Stats()
		s := Subscriber{
			Name:  cfg.Name,
			Live:  true,
			Stats: st,
			Limits: Limits{
				MaxActive:     cfg.MaxActive,
				PerKey:        cfg.Backlog.PerKey,
				Total:         cfg.Backlog.Total,
				WhenFull:      cfg.Backlog.WhenFull.String(),
				OnExhausted:   cfg.OnExhausted.String(),
				ParksInMemory: cfg.Parks == nil,
			},
			ParkedKeys:   int(st.ParkedKeys),
			ParkedEvents: int(st.Parked),
		}
		if q.Top > 0 {
			s.Backlog = backlog(e.TopBacklog(q.Top))
		}
		if q.StuckAfter > 0 {
			s.Stuck = backlog(e.Stuck(q.StuckAfter))
		}
		if q.Oldest {
			s.OldestAge = e.OldestAge()
		}
		out = append(out, s)
	}
	return out, nil
}

func backlog[K comparable](kbs []runtime.KeyBacklog[K]) []KeyBacklog {
	out := make([]KeyBacklog, len(kbs))
	for i, kb := range kbs {
		out[i] = KeyBacklog{Key: text(kb.Key), Pending: kb.Pending, OldestAge: kb.OldestAge}
	}
	return out
}

// ParkedKeys implements Inspector. It reads the first events of each key it
// returns, for the attempts and the error of the event that parked it.
func (v Engines[K, E]) ParkedKeys(ctx context.Context, subscriber string, offset, limit int) ([]ParkedKey, int, error) {
	e, err := v.engine(subscriber)
	if err != nil {
		return nil, 0, err
	}
	parks := e.Config().Parks
	keys, err := parks.Keys(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: parked keys: %w", subscriber, err)
	}
	page := window(keys, offset, limit)
	out := make([]ParkedKey, len(page))
	for i, pk := range page {
		out[i] = ParkedKey{Key: text(pk.Key), Reason: pk.Reason, Events: pk.Events, Since: pk.Since}
		first, err := parks.Read(ctx, pk.Key, 0, firstPage)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: parked events of %s: %w", subscriber, out[i].Key, err)
		}
		out[i].Attempts, out[i].Error = cause(first)
	}
	return out, len(keys), nil
}

// window returns up to limit of items from offset on (all of them from
// offset for a limit below 1).
func window[T any](items []T, offset, limit int) []T {
	offset = min(max(offset, 0), len(items))
	items = items[offset:]
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	return items
}

// cause returns the attempts and the error of the event that parked a key,
// found among its first parked events: the first that carries an error, or
// else the first.
func cause[E any](first []runtime.ParkedEvent[E]) (attempts int, err string) {
	for _, ev := range first {
		if ev.Err != "" {
			return ev.Attempts, ev.Err
		}
	}
	if len(first) > 0 {
		return first[0].Attempts, ""
	}
	return 0, ""
}

// ParkedEvents implements Inspector.
func (v Engines[K, E]) ParkedEvents(ctx context.Context, subscriber, key string, after uint64, limit int) ([]ParkedEvent, error) {
	e, err := v.engine(subscriber)
	if err != nil {
		return nil, err
	}
	k, err := v.key(key)
	if err != nil {
		return nil, err
	}
	events, err := e.Config().Parks.Read(ctx, k, after, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: parked events of %s: %w", subscriber, key, err)
	}
	out := make([]ParkedEvent, len(events))
	for i, ev := range events {
		name, data, err := v.encode(ev.Event)
		if err != nil {
			return nil, fmt.Errorf("%s: parked event %d of %s: %w", subscriber, ev.Seq, key, err)
		}
		out[i] = ParkedEvent{Seq: ev.Seq, Name: name, Data: data, Error: ev.Err, Attempts: ev.Attempts, At: ev.At}
	}
	return out, nil
}

// encode returns an event's name and encoding.
func (v Engines[K, E]) encode(ev E) (string, []byte, error) {
	if v.Codec != nil {
		return v.Codec.Encode(ev)
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return "", nil, err
	}
	name := "<nil>"
	if t := reflect.TypeOf(any(ev)); t != nil {
		name = t.String()
	}
	return name, data, nil
}

// Key implements Inspector.
func (v Engines[K, E]) Key(ctx context.Context, subscriber, key string) (Key, error) {
	e, err := v.engine(subscriber)
	if err != nil {
		return Key{}, err
	}
	k, err := v.key(key)
	if err != nil {
		return Key{}, err
	}
	ks := e.KeyStatus(k)
	out := Key{Key: key, HasVersion: v.Version != nil, Live: true, Pending: ks.Pending, OldestAge: ks.OldestAge}
	if ks.Running {
		out.Running = v.running(ks)
	}
	keys, err := e.Config().Parks.Keys(ctx)
	if err != nil {
		return Key{}, fmt.Errorf("%s: parked keys: %w", subscriber, err)
	}
	for _, pk := range keys {
		if pk.Key == k {
			out.Parked, out.Reason, out.Events, out.Since = true, pk.Reason, pk.Events, pk.Since
			break
		}
	}
	if v.Version != nil {
		if out.Version, err = v.Version(ctx, subscriber, k); err != nil {
			return Key{}, err
		}
	}
	if v.State != nil {
		if out.State, err = v.State(ctx, subscriber, k); err != nil {
			return Key{}, err
		}
	}
	return out, nil
}

// Replay implements Inspector: it waits for the replay to finish or ctx to
// end (the replay goes on; the error is ctx's).
func (v Engines[K, E]) Replay(ctx context.Context, subscriber, key string) (Result, error) {
	e, k, err := v.target(subscriber, key)
	if err != nil {
		return Result{}, err
	}
	if err := e.Replay(ctx, k); err != nil {
		return Result{}, err
	}
	return Result{Done: true, Message: fmt.Sprintf("replayed %s in %s", key, subscriber)}, nil
}

// Discard implements Inspector.
func (v Engines[K, E]) Discard(ctx context.Context, subscriber, key string) (Result, error) {
	e, k, err := v.target(subscriber, key)
	if err != nil {
		return Result{}, err
	}
	n, err := e.Discard(ctx, k)
	if err != nil {
		return Result{}, err
	}
	return Result{Done: true, Events: n, Message: fmt.Sprintf("discarded %d events of %s in %s", n, key, subscriber)}, nil
}

func (v Engines[K, E]) target(subscriber, key string) (*runtime.Engine[K, E], K, error) {
	var k K
	e, err := v.engine(subscriber)
	if err != nil {
		return nil, k, err
	}
	k, err = v.key(key)
	return e, k, err
}

// running describes the attempt ks says runs.
func (v Engines[K, E]) running(ks runtime.KeyStatus[E]) *Running {
	r := &Running{Known: ks.Attempt > 0}
	if !r.Known {
		return r
	}
	r.Attempt, r.Started, r.Batch = ks.Attempt, ks.Started, ks.Batch
	if ks.Ended != nil {
		r.Ended = ks.Ended.Error()
	}
	if name, data, err := v.encode(ks.Event); err == nil {
		r.Name, r.Data = name, data
	} else {
		r.Name = "(cannot encode: " + err.Error() + ")"
	}
	if v.EventVersion != nil {
		r.Version, r.HasVersion = v.EventVersion(ks.Event)
	} else if ve, ok := any(ks.Event).(interface{ EventVersion() uint64 }); ok {
		r.HasVersion, r.Version = true, ve.EventVersion()
	}
	return r
}

// CancelAttempt implements KeyOperator (runtime.Engine.CancelAttempt).
func (v Engines[K, E]) CancelAttempt(_ context.Context, subscriber, key string, cause error) (Result, error) {
	e, k, err := v.target(subscriber, key)
	if err != nil {
		return Result{}, err
	}
	if err := e.CancelAttempt(k, cause); err != nil {
		return Result{}, err
	}
	return Result{Done: true, Message: fmt.Sprintf("cancelled the running attempt of %s in %s: the retry policy follows", key, subscriber)}, nil
}

// ParkNow implements KeyOperator (runtime.Engine.ParkNow): it waits for
// the park or ctx's end (the park goes on; the error is ctx's).
func (v Engines[K, E]) ParkNow(ctx context.Context, subscriber, key, reason string) (Result, error) {
	e, k, err := v.target(subscriber, key)
	if err != nil {
		return Result{}, err
	}
	n, err := e.ParkNow(ctx, k, reason)
	if err != nil {
		return Result{}, err
	}
	return Result{Done: true, Events: n, Message: fmt.Sprintf("parked %s in %s now with %d events", key, subscriber, n)}, nil
}
