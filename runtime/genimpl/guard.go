package genimpl

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ordergen/ordergen/runtime"
)

// The guards of a subscriber whose versions and states are in stores of
// their own (in memory by default): handle for one event, resync for a key
// whose resequencer bound is hit. The version guard skips a duplicate or
// stale event (version <= stored), applies the next one (stored+1) and, on
// a gap, applies a snapshot but holds a delta back until the versions
// before it arrive. The state guard follows the rules of rules.go. The
// stores are updated after the handler succeeded, or returned
// runtime.ErrUnimplemented: that event is then acknowledged (its version
// and state advance) and skipped with ReasonUnimplemented.

// handle is the engine handler of a subscriber that is not transactional.
func (s *subscriber[K, E, B]) handle(ctx context.Context, key K, v B) error {
	en := s.en
	r, err := en.ruleOf(key, &v)
	if err != nil {
		return err
	}
	if s.versions == nil && s.states == nil {
		err := s.h.Call(ctx, key, v)
		if errors.Is(err, runtime.ErrUnimplemented) {
			return runtime.Skip(ReasonUnimplemented)
		}
		return err
	}
	var stored storedVersion[K]
	var version uint64
	if s.versions != nil {
		version = en.versionOf(&v)
		var err error
		if stored, err = s.readVersion(ctx, key); err != nil {
			return err
		}
		if verdict := CheckVersion(version, stored.v, r.Snapshot); verdict != nil {
			return s.skip(key, &v, verdict)
		}
	}
	var current string
	if s.states != nil && (r.To != "" || len(r.In) > 0) {
		var err error
		if current, err = s.states.State(ctx, key); err != nil {
			return en.errorf(key, "read state: %w", err)
		}
		reason, err := en.stateReason(key, current, r)
		if err != nil {
			return err
		}
		if reason != "" {
			if s.versions != nil {
				// A skipped event still uses up its version, or the next
				// one would wait for it forever.
				if err := s.setVersion(ctx, key, stored, version); err != nil {
					return err
				}
				return s.skip(key, &v, runtime.SkipApplied(reason))
			}
			s.duplicate(ctx, key, &v, r, current, reason)
			return s.skip(key, &v, runtime.Skip(reason))
		}
	}
	err = s.h.Call(ctx, key, v)
	unimplemented := errors.Is(err, runtime.ErrUnimplemented)
	if err != nil && !unimplemented {
		return err
	}
	if r.To != "" && r.To != current {
		if err := s.setState(ctx, key, current, r.To); err != nil {
			return err
		}
	}
	if s.versions != nil {
		if err := s.setVersion(ctx, key, stored, version); err != nil {
			return err
		}
	}
	return acknowledged(unimplemented)
}

// acknowledged is a guard's verdict on an event whose stores advanced: nil,
// or, for an event its handler does not implement, a skip with
// ReasonUnimplemented that, as SkipApplied, lets the key move on (events
// held on a gap it filled are due again).
func acknowledged(unimplemented bool) error {
	if unimplemented {
		return runtime.SkipApplied(ReasonUnimplemented)
	}
	return nil
}

// setState stores state as key's, if current is still stored.
func (s *subscriber[K, E, B]) setState(ctx context.Context, key K, current, state string) error {
	ok, err := s.states.CompareAndSetState(ctx, key, current, state)
	if err != nil {
		return s.en.errorf(key, "store state %s: %w", state, err)
	}
	if !ok {
		return s.en.errorf(key, "state moved from %q by another writer", current)
	}
	return nil
}

// skip returns verdict, a guard's verdict on v, an event of key; when it
// is a skip, it tells the subscriber's OnSkip first.
func (s *subscriber[K, E, B]) skip(key K, v *B, verdict error) error {
	if s.onSkip != nil {
		if reason, ok := runtime.IsSkip(verdict); ok {
			s.onSkip(key, s.en.event(v), reason)
		}
	}
	return verdict
}

// duplicate logs, at debug level and once for the subscriber, the first
// event of an entity without a version that its state guard skips because
// it moves the entity to the state it is in (rule r, in state current):
// without a version that is a duplicate, and a schema that means an event
// within a state (in:) loses events silently. The later ones are counted
// as skipped.
func (s *subscriber[K, E, B]) duplicate(ctx context.Context, key K, v *B, r *EventRule[E], current, reason string) {
	if s.en.versioned() || r.To == "" || current != r.To || !s.duplicateLogged.CompareAndSwap(false, true) {
		return
	}
	log := s.log
	if log == nil {
		log = slog.Default()
	}
	log.DebugContext(ctx,
		"ordergen: skipped a move to the state the key is in, as a duplicate ("+s.en.Name+
			" has no version); logged once per subscriber, the later ones are counted as skipped",
		"subscriber", s.name, "key", key, "event", r.Name, "reason", reason,
		"hint", "an event that happens within a state without moving it takes in: [states] in the schema, not to:",
	)
}

// resync is the engine's Resync (runtime.ResyncFunc) of a subscriber that
// is not transactional: when the resequencer bound of key is hit, it asks
// the handler for the key's version and state at the source of truth and
// stores them as the key's. The engine then offers the held events again:
// the guards skip the ones the new version covers, whose number it
// returns, and apply the later ones in order. A version that is not above
// the stored one is a failure (the source of truth is behind the gap): the
// engine retries, then parks the key.
func (s *subscriber[K, E, B]) resync(ctx context.Context, key K, held []B) (int, error) {
	en := s.en
	stored, err := s.readVersion(ctx, key)
	if err != nil {
		return 0, err
	}
	var state string
	if s.states != nil {
		if state, err = s.states.State(ctx, key); err != nil {
			return 0, en.errorf(key, "read state: %w", err)
		}
	}
	version, source, err := s.h.Resync(ctx, key)
	if err := s.checkResync(key, stored.v, version, source, err); err != nil {
		return 0, err
	}
	if s.states != nil && source != state {
		if err := s.setState(ctx, key, state, source); err != nil {
			return 0, err
		}
	}
	if err := s.setVersion(ctx, key, stored, version); err != nil {
		return 0, err
	}
	return s.covered(held, version), nil
}

// checkResync returns the failure of a resync of key whose handler
// returned version, state and err, the stored version being stored.
func (s *subscriber[K, E, B]) checkResync(key K, stored, version uint64, state string, err error) error {
	en := s.en
	switch {
	case errors.Is(err, runtime.ErrUnimplemented):
		return runtime.Permanent(en.errorf(key, "resync: %w", err))
	case err != nil:
		return en.errorf(key, "resync: %w", err)
	case version <= stored:
		return en.errorf(key, "resync reached version %d, not above the stored %d: the source of truth is behind the gap", version, stored)
	case en.stated() && en.rank(state) == notAState:
		return runtime.Permanent(en.errorf(key, "resync reached state %q, not a state of %s", state, en.Name))
	}
	return nil
}

// covered returns how many of held the version a resync reached covers.
func (s *subscriber[K, E, B]) covered(held []B, version uint64) int {
	n := 0
	for i := range held {
		if s.en.versionOf(&held[i]) <= version {
			n++
		}
	}
	return n
}
