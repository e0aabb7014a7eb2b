package genimpl

import (
	"context"
	"database/sql"
	"errors"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// The batch guards (entities with batch:). The guards decide each event of
// a batch in order, from the key's stored version and state, as handle does
// for one: a duplicate or stale event is skipped, a delta after a version
// gap is held back until the gap fills, the state guard skips what its
// rules skip (a skipped event still uses up its version), and a snapshot
// across a gap ends the batch (the rest comes in the next one), so that
// the batch never spans a gap. The handler gets the others in one call,
// and the stores advance once, to the last version and state decided,
// after the handler succeeded (or in its transaction). The engine learns
// each event's verdict (Verdicts). Without guards the handler gets the
// batch as a whole.

// batchRun is the guards' work on one batch, from the key's stored version
// and state to what the batch reached.
type batchRun[E any] struct {
	read, at durable.KeyState
	apply    []E     // the events the handler gets
	verdicts []error // one per decided event: nil for one in apply
}

// decide runs the guards over events from read, the key's stored version
// and state. Its error fails the whole batch.
func (s *subscriber[K, E, B]) decide(ctx context.Context, key K, events []B, read durable.KeyState) (*batchRun[E], error) {
	en := s.en
	b := &batchRun[E]{read: read, at: read, apply: make([]E, 0, len(events)), verdicts: make([]error, 0, len(events))}
	if en.stated() && en.rank(read.State) == notAState {
		return nil, runtime.Permanent(en.errorf(key, "stored state %q is not a state of %s", read.State, en.Name))
	}
	for i := range events {
		ev := &events[i]
		r, err := en.ruleOf(key, ev)
		if err != nil {
			return nil, err
		}
		var version uint64
		if en.versioned() {
			version = en.versionOf(ev)
			if v := CheckVersion(version, b.at.Version, r.Snapshot); v != nil {
				b.verdicts = append(b.verdicts, s.skip(key, ev, v))
				continue
			}
			if version > b.at.Version+1 && len(b.apply) > 0 {
				break // a snapshot across a gap starts the next batch
			}
		}
		reason, err := en.stateReason(key, b.at.State, r)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			if en.versioned() {
				b.at.Version = version // a skipped event still uses up its version
			}
			s.duplicate(ctx, key, ev, r, b.at.State, reason)
			b.verdicts = append(b.verdicts, s.skip(key, ev, runtime.Skip(reason)))
			continue
		}
		if r.To != "" {
			b.at.State = r.To
		}
		if en.versioned() {
			b.at.Version = version
		}
		b.apply = append(b.apply, en.event(ev))
		b.verdicts = append(b.verdicts, nil)
	}
	return b, nil
}

// handled takes err, what the handler returned for b.apply: an event it
// does not implement is acknowledged (its version and state still
// advance) and skipped with ReasonUnimplemented; any other error fails the
// batch, and is returned.
func (b *batchRun[E]) handled(err error) error {
	if !errors.Is(err, runtime.ErrUnimplemented) {
		return err
	}
	for i, v := range b.verdicts {
		if v == nil {
			b.verdicts[i] = runtime.Skip(ReasonUnimplemented)
		}
	}
	return nil
}

// changed reports whether the batch moved the key's version or state.
func (b *batchRun[E]) changed() bool { return b.at != b.read }

// handleBatch is the engine's batch handler of a subscriber that is not
// transactional.
func (s *subscriber[K, E, B]) handleBatch(ctx context.Context, key K, events []B) error {
	if s.versions == nil && s.states == nil {
		return acknowledge(s.h.Batch(ctx, key, s.en.events(events)))
	}
	var read durable.KeyState
	var stored storedVersion[K]
	var err error
	if s.versions != nil {
		if stored, err = s.readVersion(ctx, key); err != nil {
			return err
		}
		read.Version = stored.v
	}
	if s.states != nil {
		if read.State, err = s.states.State(ctx, key); err != nil {
			return s.en.errorf(key, "read state: %w", err)
		}
	}
	b, err := s.decide(ctx, key, events, read)
	if err != nil {
		return err
	}
	if len(b.apply) > 0 {
		if err := b.handled(s.h.Batch(ctx, key, b.apply)); err != nil {
			return err
		}
	}
	if b.at.State != read.State {
		if err := s.setState(ctx, key, read.State, b.at.State); err != nil {
			return err
		}
	}
	if b.at.Version != read.Version {
		if err := s.setVersion(ctx, key, stored, b.at.Version); err != nil {
			return err
		}
	}
	return Verdicts(b.verdicts)
}

// acknowledge is the verdict on a batch without guards whose handler
// returned err: an unimplemented batch is acknowledged and skipped.
func acknowledge(err error) error {
	if errors.Is(err, runtime.ErrUnimplemented) {
		return runtime.SkipApplied(ReasonUnimplemented)
	}
	return err
}

// handleBatchTx is the engine's batch handler of a transactional
// subscriber: the guards and the handler in one transaction of its store,
// which commits the version and state reached with the handler's writes.
func (s *subscriber[K, E, B]) handleBatchTx(ctx context.Context, key K, events []B) error {
	tx, err := s.store.BeginKey(ctx, s.name, keyText(key))
	if err != nil {
		return s.en.errorf(key, "%w", err)
	}
	defer tx.Rollback()
	verdict, at, write, err := s.batchIn(ctx, tx.Tx(), key, events, durable.KeyState{Version: tx.Version(), State: tx.State()})
	if err != nil {
		return err
	}
	if write {
		if err := tx.Commit(ctx, at.Version, at.State); err != nil {
			return s.en.errorf(key, "commit: %w", err)
		}
	}
	return verdict
}

// batchIn runs a transactional subscriber's guards and handler over a
// batch of key in tx, from read, the key's stored version and state: it
// returns the verdict on the batch, the version and state it reached, and
// whether to write them (the handler wrote, or they moved), or the failure
// of the batch.
func (s *subscriber[K, E, B]) batchIn(ctx context.Context, tx *sql.Tx, key K, events []B, read durable.KeyState) (verdict error, at durable.KeyState, write bool, err error) {
	if !s.en.guarded() {
		if err := s.tx.Batch(ctx, tx, key, s.en.events(events)); err != nil && !errors.Is(err, runtime.ErrUnimplemented) {
			return nil, read, false, err
		} else if err != nil {
			verdict = runtime.SkipApplied(ReasonUnimplemented)
		}
		return verdict, read, true, nil
	}
	b, err := s.decide(ctx, key, events, read)
	if err != nil {
		return nil, read, false, err
	}
	if len(b.apply) > 0 {
		if err := b.handled(s.tx.Batch(ctx, tx, key, b.apply)); err != nil {
			return nil, read, false, err
		}
	}
	return Verdicts(b.verdicts), b.at, len(b.apply) > 0 || b.changed(), nil
}
