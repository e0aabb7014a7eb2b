package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Topic fans a stream of events out to several subscribers. Each subscriber
// is an Engine with its own lanes, backlog and policies, so a slow or
// failing subscriber never holds up another (unless it uses the Block
// policy, which holds up the publisher). Order is per key and subscriber.
type Topic[K comparable, E any] struct {
	// subs is the subscribers, read without a lock (Publish).
	subs atomic.Pointer[[]*Engine[K, E]]

	// mu guards closed and serialises Subscribe and Close, which replace
	// subs.
	mu     sync.Mutex
	closed bool
}

// NewTopic returns a topic without subscribers.
func NewTopic[K comparable, E any]() *Topic[K, E] {
	t := &Topic[K, E]{}
	t.subs.Store(&[]*Engine[K, E]{})
	return t
}

// Subscribe starts an engine for h with cfg and adds it as a subscriber. It
// sees the events published after Subscribe returns.
func (t *Topic[K, E]) Subscribe(h Handler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	return t.add(func() (*Engine[K, E], error) { return New(h, cfg) })
}

// SubscribeBatch is Subscribe for a batch handler.
func (t *Topic[K, E]) SubscribeBatch(h BatchHandler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	return t.add(func() (*Engine[K, E], error) { return NewBatch(h, cfg) })
}

func (t *Topic[K, E]) add(start func() (*Engine[K, E], error)) (*Engine[K, E], error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	e, err := start()
	if err != nil {
		return nil, err
	}
	old := *t.subs.Load()
	subs := make([]*Engine[K, E], len(old), len(old)+1)
	copy(subs, old)
	subs = append(subs, e)
	t.subs.Store(&subs)
	return e, nil
}

// Subscribers returns the subscribers' engines, in subscription order.
func (t *Topic[K, E]) Subscribers() []*Engine[K, E] {
	return *t.subs.Load()
}

// Publish submits the event to every subscriber, in subscription order. A
// subscriber that refuses it does not stop the others: Publish returns the
// refusals joined (each names its subscriber), and the subscribers that
// accepted the event handle it.
func (t *Topic[K, E]) Publish(ctx context.Context, key K, event E) error {
	subs := *t.subs.Load()
	switch len(subs) {
	case 0:
		return ErrNoSubscribers
	case 1:
		return subs[0].Submit(ctx, key, event)
	}
	var errs []error
	for _, s := range subs {
		if err := s.Submit(ctx, key, event); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// submitTagged hands event, with tag, to the subscribers numbered from and
// up (0 is the first, in subscription order), for a transport that learns
// from each subscriber's Config.OnOutcome when its record is finished. It
// returns how many subscribers have accepted the event. It stops at the
// first subscriber that refuses it and returns that refusal: call again with
// from set to the number returned, so that no subscriber gets the event
// twice. While a subscriber has no OnOutcome it refuses everything with
// ErrInvalidConfig, since the transport would never learn that its events
// finished.
func (t *Topic[K, E]) submitTagged(ctx context.Context, key K, event E, tag uint64, from int) (int, error) {
	subs := t.Subscribers()
	for _, s := range subs {
		if s.cfg.OnOutcome == nil {
			return from, fmt.Errorf("%w: subscriber %s has no OnOutcome: a transport would never learn that its events finished", ErrInvalidConfig, s.cfg.Name)
		}
	}
	for i := from; i < len(subs); i++ {
		if err := subs[i].submitTagged(ctx, key, event, tag); err != nil {
			return i, fmt.Errorf("submit to %s: %w", subs[i].cfg.Name, err)
		}
	}
	return len(subs), nil
}

// Flush waits until every subscriber is quiescent (see Engine.Flush). Its
// error names the subscriber it was waiting for.
func (t *Topic[K, E]) Flush(ctx context.Context) error {
	for _, s := range t.Subscribers() {
		if err := s.Flush(ctx); err != nil {
			return fmt.Errorf("flush %s: %w", s.cfg.Name, err)
		}
	}
	return nil
}

// Close closes every subscriber at once and returns their errors joined.
func (t *Topic[K, E]) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	t.closed = true
	t.mu.Unlock()
	subs := t.Subscribers()
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		wg.Go(func() { errs[i] = s.Close(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
