package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// storeView is the console's view of one entity in a durable store: the
// parks of its namespaces ("Account", "Account/audit"), what its guards
// stored, and requests that the running service carries out (see
// sqlstore.Server), since a replay needs the service's handlers.
type storeView struct {
	entity string
	store  *sqlstore.Store
}

var (
	_ inspect.Inspector   = storeView{}
	_ inspect.Requester   = storeView{}
	_ inspect.KeyOperator = storeView{}
)

// recentRequests is how many of the latest requests the catalog and the
// views look through.
const recentRequests = 200

// firstEvents is how many of a park's first events are read to find the
// event that parked the key.
const firstEvents = 16

// catalog returns a view of every entity in s, by name: those with parked
// keys, stored versions or states, or recent requests.
func catalog(s *sqlstore.Store) func(ctx context.Context) ([]inspect.Inspector, error) {
	return func(ctx context.Context) ([]inspect.Inspector, error) {
		namespaces, err := s.Namespaces(ctx)
		if err != nil {
			return nil, err
		}
		reqs, err := s.Requests(ctx, recentRequests)
		if err != nil {
			return nil, err
		}
		for _, r := range reqs {
			namespaces = append(namespaces, r.Namespace)
		}
		var entities []string
		for _, ns := range namespaces {
			entities = append(entities, entityOf(ns))
		}
		slices.Sort(entities)
		var out []inspect.Inspector
		for _, e := range slices.Compact(entities) {
			out = append(out, storeView{entity: e, store: s})
		}
		return out, nil
	}
}

// entityOf returns the entity of a namespace: "Account" of "Account/audit".
func entityOf(namespace string) string {
	e, _, _ := strings.Cut(namespace, "/")
	return e
}

func (v storeView) Entity() string { return v.entity }

// owns reports whether namespace is one of the entity's subscribers.
func (v storeView) owns(namespace string) bool { return entityOf(namespace) == v.entity }

func (v storeView) parks(subscriber string) (runtime.ParkStore[string, durable.RawEvent], error) {
	if !v.owns(subscriber) {
		return nil, fmt.Errorf("%w: %s is not a subscriber of %s", inspect.ErrNotFound, subscriber, v.entity)
	}
	return v.store.Parks(subscriber), nil
}

// Subscribers returns the entity's namespaces that have parked keys, with
// their counts; the store has no counters or backlog.
func (v storeView) Subscribers(ctx context.Context, _ inspect.Query) ([]inspect.Subscriber, error) {
	namespaces, err := v.store.ParkedNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []inspect.Subscriber
	for _, ns := range namespaces {
		if !v.owns(ns) {
			continue
		}
		keys, err := v.store.Parks(ns).Keys(ctx)
		if err != nil {
			return nil, fmt.Errorf("parked keys of %s: %w", ns, err)
		}
		s := inspect.Subscriber{Name: ns, ParkedKeys: len(keys)}
		for _, k := range keys {
			s.ParkedEvents += k.Events
		}
		out = append(out, s)
	}
	return out, nil
}

func (v storeView) ParkedKeys(ctx context.Context, subscriber string, offset, limit int) ([]inspect.ParkedKey, int, error) {
	parks, err := v.parks(subscriber)
	if err != nil {
		return nil, 0, err
	}
	keys, err := parks.Keys(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("parked keys of %s: %w", subscriber, err)
	}
	total := len(keys)
	keys = keys[min(offset, total):]
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]inspect.ParkedKey, len(keys))
	for i, k := range keys {
		out[i] = inspect.ParkedKey{Key: k.Key, Reason: k.Reason, Events: k.Events, Since: k.Since}
		first, err := parks.Read(ctx, k.Key, 0, firstEvents)
		if err != nil {
			return nil, 0, fmt.Errorf("parked events of %s in %s: %w", k.Key, subscriber, err)
		}
		out[i].Attempts, out[i].Error = cause(first)
	}
	return out, total, nil
}

// cause returns the attempts and the error of the event that parked a key:
// the first of its first events that carries an error, or else the first.
func cause(first []runtime.ParkedEvent[durable.RawEvent]) (int, string) {
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

func (v storeView) ParkedEvents(ctx context.Context, subscriber, key string, after uint64, limit int) ([]inspect.ParkedEvent, error) {
	parks, err := v.parks(subscriber)
	if err != nil {
		return nil, err
	}
	events, err := parks.Read(ctx, key, after, limit)
	if err != nil {
		return nil, fmt.Errorf("parked events of %s in %s: %w", key, subscriber, err)
	}
	out := make([]inspect.ParkedEvent, len(events))
	for i, ev := range events {
		out[i] = inspect.ParkedEvent{Seq: ev.Seq, Name: ev.Event.Name, Data: ev.Event.Data, Error: ev.Err, Attempts: ev.Attempts, At: ev.At}
	}
	return out, nil
}

func (v storeView) Key(ctx context.Context, subscriber, key string) (inspect.Key, error) {
	parks, err := v.parks(subscriber)
	if err != nil {
		return inspect.Key{}, err
	}
	out := inspect.Key{Key: key}
	pk, parked, err := find(ctx, parks, key)
	if err != nil {
		return inspect.Key{}, err
	}
	if parked {
		out.Parked, out.Reason, out.Events, out.Since = true, pk.Reason, pk.Events, pk.Since
	}
	if out.Version, err = v.store.Versions(subscriber).Version(ctx, key); err != nil {
		return inspect.Key{}, err
	}
	out.HasVersion = out.Version > 0 // the store keeps no versions for an entity without
	if out.State, err = v.store.States(subscriber).State(ctx, key); err != nil {
		return inspect.Key{}, err
	}
	return out, nil
}

// find returns key's park, if it is parked.
func find(ctx context.Context, parks runtime.ParkStore[string, durable.RawEvent], key string) (runtime.ParkedKey[string], bool, error) {
	keys, err := parks.Keys(ctx)
	if err != nil {
		return runtime.ParkedKey[string]{}, false, err
	}
	for _, k := range keys {
		if k.Key == key {
			return k, true, nil
		}
	}
	return runtime.ParkedKey[string]{}, false, nil
}

func (v storeView) Replay(ctx context.Context, subscriber, key string) (inspect.Result, error) {
	return v.request(ctx, subscriber, key, sqlstore.Replay)
}

func (v storeView) Discard(ctx context.Context, subscriber, key string) (inspect.Result, error) {
	return v.request(ctx, subscriber, key, sqlstore.Discard)
}

// CancelAttempt implements inspect.KeyOperator: it leaves a request for the
// running service, which alone knows what runs (the cause is its own).
func (v storeView) CancelAttempt(ctx context.Context, subscriber, key string, _ error) (inspect.Result, error) {
	return v.request(ctx, subscriber, key, sqlstore.CancelAttempt)
}

// ParkNow implements inspect.KeyOperator: it leaves a request for the
// running service (the reason is its own).
func (v storeView) ParkNow(ctx context.Context, subscriber, key, _ string) (inspect.Result, error) {
	return v.request(ctx, subscriber, key, sqlstore.ParkNow)
}

// request leaves a request for the running service: for a key parked in
// the store (replay, discard), or for any key of the entity (cancel-attempt,
// park-now: the store cannot tell what runs).
func (v storeView) request(ctx context.Context, subscriber, key string, action sqlstore.Action) (inspect.Result, error) {
	parks, err := v.parks(subscriber)
	if err != nil {
		return inspect.Result{}, err
	}
	if action == sqlstore.Replay || action == sqlstore.Discard {
		if _, parked, err := find(ctx, parks, key); err != nil {
			return inspect.Result{}, err
		} else if !parked {
			return inspect.Result{}, fmt.Errorf("%s %s in %s: %w in the store", action, quote(key), subscriber, runtime.ErrNotParked)
		}
	}
	r, err := v.store.Request(ctx, subscriber, key, action)
	if err != nil {
		return inspect.Result{}, err
	}
	return inspect.Result{Request: r.ID, Message: fmt.Sprintf("request %d: %s %s in %s, for the running service to carry out",
		r.ID, action, quote(key), subscriber)}, nil
}

// Requests returns the entity's latest requests, newest first.
func (v storeView) Requests(ctx context.Context, limit int) ([]inspect.Request, error) {
	reqs, err := v.store.Requests(ctx, recentRequests)
	if err != nil {
		return nil, err
	}
	var out []inspect.Request
	for _, r := range reqs {
		if v.owns(r.Namespace) && len(out) < limit {
			out = append(out, inspect.Request{ID: r.ID, Action: string(r.Action), Subscriber: r.Namespace, Key: r.Key,
				Requested: r.Requested, Claimed: r.Claimed, Done: r.Done, Result: r.Result})
		}
	}
	return out, nil
}
