package durable

import (
	"context"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
)

// EncodedParks gives a park store of text keys and raw events (a durable
// store's) the key and event types of an engine: keys go through EncodeKey
// and DecodeKey, events through codec. A stored key or event that does not
// decode makes Keys or Read fail with an error that names it, wrapping
// ErrInvalidEvent or ErrUnknownEventType; nothing panics.
func EncodedParks[K comparable, E any](raw runtime.ParkStore[string, RawEvent], codec Codec[E]) runtime.ParkStore[K, E] {
	return encodedParks[K, E]{raw: raw, codec: codec}
}

type encodedParks[K comparable, E any] struct {
	raw   runtime.ParkStore[string, RawEvent]
	codec Codec[E]
}

func (p encodedParks[K, E]) Append(ctx context.Context, key K, reason string, events []runtime.ParkedEvent[E]) error {
	k, err := EncodeKey(key)
	if err != nil {
		return err
	}
	raw := make([]runtime.ParkedEvent[RawEvent], len(events))
	for i, ev := range events {
		name, data, err := p.codec.Encode(ev.Event)
		if err != nil {
			return fmt.Errorf("park key %s: encode event: %w", k, err)
		}
		raw[i] = runtime.ParkedEvent[RawEvent]{Event: RawEvent{Name: name, Data: data}, Err: ev.Err, Attempts: ev.Attempts, At: ev.At, Seq: ev.Seq}
	}
	return p.raw.Append(ctx, k, reason, raw)
}

func (p encodedParks[K, E]) Keys(ctx context.Context) ([]runtime.ParkedKey[K], error) {
	raw, err := p.raw.Keys(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]runtime.ParkedKey[K], len(raw))
	for i, pk := range raw {
		k, err := DecodeKey[K](pk.Key)
		if err != nil {
			return nil, fmt.Errorf("parked key %q: %w", pk.Key, err)
		}
		keys[i] = runtime.ParkedKey[K]{Key: k, Reason: pk.Reason, Events: pk.Events, Since: pk.Since}
	}
	return keys, nil
}

func (p encodedParks[K, E]) Read(ctx context.Context, key K, after uint64, limit int) ([]runtime.ParkedEvent[E], error) {
	k, err := EncodeKey(key)
	if err != nil {
		return nil, err
	}
	raw, err := p.raw.Read(ctx, k, after, limit)
	if err != nil {
		return nil, err
	}
	events := make([]runtime.ParkedEvent[E], len(raw))
	for i, ev := range raw {
		e, err := p.codec.Decode(ev.Event.Name, ev.Event.Data)
		if err != nil {
			return nil, fmt.Errorf("parked event %d of key %s: %w", ev.Seq, k, err)
		}
		events[i] = runtime.ParkedEvent[E]{Event: e, Err: ev.Err, Attempts: ev.Attempts, At: ev.At, Seq: ev.Seq}
	}
	return events, nil
}

func (p encodedParks[K, E]) Remove(ctx context.Context, key K, seq uint64) error {
	k, err := EncodeKey(key)
	if err != nil {
		return err
	}
	return p.raw.Remove(ctx, k, seq)
}

func (p encodedParks[K, E]) Clear(ctx context.Context, key K) (int, error) {
	k, err := EncodeKey(key)
	if err != nil {
		return 0, err
	}
	return p.raw.Clear(ctx, k)
}

// EncodedVersions gives a version store of text keys (a durable store's) the
// key type K, through EncodeKey.
func EncodedVersions[K comparable](raw runtime.VersionStore[string]) runtime.VersionStore[K] {
	return encodedVersions[K]{raw: raw}
}

type encodedVersions[K comparable] struct{ raw runtime.VersionStore[string] }

func (v encodedVersions[K]) Version(ctx context.Context, key K) (uint64, error) {
	k, err := EncodeKey(key)
	if err != nil {
		return 0, err
	}
	return v.raw.Version(ctx, k)
}

func (v encodedVersions[K]) CompareAndSet(ctx context.Context, key K, old, next uint64) (bool, error) {
	k, err := EncodeKey(key)
	if err != nil {
		return false, err
	}
	return v.raw.CompareAndSet(ctx, k, old, next)
}

// EncodedStates gives a state store of text keys (a durable store's) the key
// type K, through EncodeKey.
func EncodedStates[K comparable](raw runtime.StateStore[string]) runtime.StateStore[K] {
	return encodedStates[K]{raw: raw}
}

type encodedStates[K comparable] struct{ raw runtime.StateStore[string] }

func (s encodedStates[K]) State(ctx context.Context, key K) (string, error) {
	k, err := EncodeKey(key)
	if err != nil {
		return "", err
	}
	return s.raw.State(ctx, k)
}

func (s encodedStates[K]) CompareAndSetState(ctx context.Context, key K, old, next string) (bool, error) {
	k, err := EncodeKey(key)
	if err != nil {
		return false, err
	}
	return s.raw.CompareAndSetState(ctx, k, old, next)
}
