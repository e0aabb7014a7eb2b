package runtime

import (
	"context"
	"errors"
)

// Handler handles one event of one key. The engine never runs two events of
// one key at once and runs a key's events in submission order.
type Handler[K comparable, E any] func(ctx context.Context, key K, event E) error

// BatchHandler handles up to Config.BatchSize pending events of one key, in
// submission order. The batch is the unit of retry and of parking.
type BatchHandler[K comparable, E any] func(ctx context.Context, key K, events []E) error

// Engine dispatches events to per-key lanes.
type Engine[K comparable, E any] struct{ cfg Config[K, E] }

var errTODO = errors.New("todo")

// New returns a started engine that calls h for each event.
func New[K comparable, E any](h Handler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	return nil, errTODO
}

// NewBatch returns a started engine that calls h with batches of a key's events.
func NewBatch[K comparable, E any](h BatchHandler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	return nil, errTODO
}

// Submit hands an event of key to its lane.
func (e *Engine[K, E]) Submit(ctx context.Context, key K, event E) error { return errTODO }

// Flush waits until every event accepted before the call has an outcome, or is held or parked.
func (e *Engine[K, E]) Flush(ctx context.Context) error { return errTODO }

// Close stops accepting, drains and stops the workers.
func (e *Engine[K, E]) Close(ctx context.Context) error { return errTODO }

// Replay re-runs key's parked events in order and unparks the key when all succeed.
func (e *Engine[K, E]) Replay(ctx context.Context, key K) error { return errTODO }

// Discard drops key's parked events and unparks it; it returns how many were dropped.
func (e *Engine[K, E]) Discard(ctx context.Context, key K) (int, error) { return 0, errTODO }

// ParkedKeys lists the parked keys with their reasons.
func (e *Engine[K, E]) ParkedKeys(ctx context.Context) ([]ParkedKey[K], error) { return nil, errTODO }

// ParkedEvents returns key's parked events in order.
func (e *Engine[K, E]) ParkedEvents(ctx context.Context, key K) ([]ParkedEvent[E], error) {
	return nil, errTODO
}

// Stats returns a snapshot of the counters.
func (e *Engine[K, E]) Stats() Stats { return Stats{} }

// TopBacklog returns up to n keys with the largest backlog.
func (e *Engine[K, E]) TopBacklog(n int) []KeyBacklog[K] { return nil }

// Topic fans events out to several subscribers, each with its own engine.
type Topic[K comparable, E any] struct{}

// NewTopic returns a topic without subscribers.
func NewTopic[K comparable, E any]() *Topic[K, E] { return &Topic[K, E]{} }

// Subscribe adds a subscriber with its own lanes.
func (t *Topic[K, E]) Subscribe(h Handler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	return nil, errTODO
}

// Publish submits the event to every subscriber.
func (t *Topic[K, E]) Publish(ctx context.Context, key K, event E) error { return errTODO }

// Close closes every subscriber.
func (t *Topic[K, E]) Close(ctx context.Context) error { return errTODO }
