package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The operator's view of a Topic: each method asks every subscriber and
// names subscribers by their Config.Name, so generated dispatchers need not
// repeat these loops for every entity.

// Replay re-runs key's parked events (see Engine.Replay) in every subscriber
// where key is parked. It returns the subscribers' errors joined, or an
// error wrapping ErrNotParked when key is parked in none.
func (t *Topic[K, E]) Replay(ctx context.Context, key K) error {
	_, err := t.eachParked(key, "replay", func(s *Engine[K, E]) (int, error) {
		return 0, s.Replay(ctx, key)
	})
	return err
}

// Discard removes key's parked events (see Engine.Discard) in every subscriber
// where key is parked and returns how many it dropped in all. It returns an
// error wrapping ErrNotParked when key is parked in none.
func (t *Topic[K, E]) Discard(ctx context.Context, key K) (int, error) {
	return t.eachParked(key, "discard", func(s *Engine[K, E]) (int, error) {
		return s.Discard(ctx, key)
	})
}

// eachParked runs op on every subscriber, skipping those where key is not
// parked, and adds up what op counted.
func (t *Topic[K, E]) eachParked(key K, verb string, op func(*Engine[K, E]) (int, error)) (int, error) {
	var errs []error
	parked := false
	total := 0
	for _, s := range t.Subscribers() {
		n, err := op(s)
		if errors.Is(err, ErrNotParked) {
			continue
		}
		parked = true
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %v in %s: %w", verb, key, s.cfg.Name, err))
		}
	}
	if !parked {
		return 0, fmt.Errorf("%s %v: %w in any subscriber", verb, key, ErrNotParked)
	}
	return total, errors.Join(errs...)
}

// ParkedKeys returns the parked keys of every subscriber that has any, by
// subscriber name.
func (t *Topic[K, E]) ParkedKeys(ctx context.Context) (map[string][]ParkedKey[K], error) {
	out := make(map[string][]ParkedKey[K])
	for _, s := range t.Subscribers() {
		keys, err := s.ParkedKeys(ctx)
		if err != nil {
			return nil, fmt.Errorf("parked keys of %s: %w", s.cfg.Name, err)
		}
		if len(keys) > 0 {
			out[s.cfg.Name] = keys
		}
	}
	return out, nil
}

// Subscriber returns the subscriber whose Config.Name is name.
func (t *Topic[K, E]) Subscriber(name string) (*Engine[K, E], bool) {
	for _, s := range t.Subscribers() {
		if s.cfg.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Health returns nil when no subscriber has a key whose oldest pending event
// is older than age, and otherwise the subscribers' *StuckError joined.
func (t *Topic[K, E]) Health(age time.Duration) error {
	var errs []error
	for _, s := range t.Subscribers() {
		if err := s.Health(age); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stats returns a snapshot of each subscriber's counters, by subscriber
// name. Every subscriber sees every published event: add them up only
// knowing that.
func (t *Topic[K, E]) Stats() map[string]Stats {
	out := make(map[string]Stats)
	for _, s := range t.Subscribers() {
		out[s.cfg.Name] = s.Stats()
	}
	return out
}

// TopBacklog returns, by subscriber name, up to n keys with the largest
// backlog in each subscriber that has any (see Engine.TopBacklog).
func (t *Topic[K, E]) TopBacklog(n int) map[string][]KeyBacklog[K] {
	return t.perSubscriber(func(s *Engine[K, E]) []KeyBacklog[K] { return s.TopBacklog(n) })
}

// Stuck returns, by subscriber name, the keys whose oldest pending event is
// older than age in each subscriber that has any (see Engine.Stuck).
func (t *Topic[K, E]) Stuck(age time.Duration) map[string][]KeyBacklog[K] {
	return t.perSubscriber(func(s *Engine[K, E]) []KeyBacklog[K] { return s.Stuck(age) })
}

// perSubscriber collects what of asks each subscriber, leaving out the
// subscribers with nothing to report.
func (t *Topic[K, E]) perSubscriber(of func(*Engine[K, E]) []KeyBacklog[K]) map[string][]KeyBacklog[K] {
	out := make(map[string][]KeyBacklog[K])
	for _, s := range t.Subscribers() {
		if kbs := of(s); len(kbs) > 0 {
			out[s.cfg.Name] = kbs
		}
	}
	return out
}

// withdraw takes back, in every subscriber, the accepted events whose tag
// match selects and that have not started (see TransportEngine.Withdraw), and returns
// how many it withdrew in all. The subscribers withdraw at once, each
// waiting up to ctx's end for the selected events its running lanes took,
// so that each gets the whole of ctx's time before the running attempts of
// selected events are cancelled. Its error joins the subscribers' errors,
// each naming its subscriber.
func (t *Topic[K, E]) withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	subs := t.Subscribers()
	counts := make([]int, len(subs))
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		wg.Go(func() {
			var err error
			if counts[i], err = s.withdraw(ctx, match); err != nil {
				errs[i] = fmt.Errorf("withdraw from %s: %w", s.cfg.Name, err)
			}
		})
	}
	wg.Wait()
	n := 0
	for _, c := range counts {
		n += c
	}
	return n, errors.Join(errs...)
}
