package genimpl

import (
	"context"
	"database/sql"
	"errors"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

// The guards of a transactional subscriber of an entity with group:. Its
// engine is a batch engine over handleGroup, which hands a key's batch to
// the subscriber's groupcommit.Committer as one work, run in a transaction
// shared with other keys' work, from the version and state the group read:
// the guards decide as in memory, the handler writes with the group's
// transaction, and the key's new version and state are written, and
// everything committed, with the group. The engine learns each event's
// verdict (Verdicts).

// handleGroup is the engine's batch handler of a grouped transactional
// subscriber.
func (s *subscriber[K, E, B]) handleGroup(ctx context.Context, key K, events []B) error {
	text := keyText(key)
	switch {
	case s.en.Batch, s.en.Notification:
		// One call of the handler for the batch (a notification's key
		// changed once): a failure fails the batch, nothing of it commits.
		return s.group.Do(ctx, text, len(events), func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
			var verdict error
			var at durable.KeyState
			var err error
			if s.en.Notification {
				at, err = read, s.tx.Call(ctx, tx, key, events[0])
				if errors.Is(err, runtime.ErrUnimplemented) {
					verdict, err = runtime.Skip(ReasonUnimplemented), nil
				}
			} else {
				verdict, at, _, err = s.batchIn(ctx, tx, key, events, read)
			}
			if err != nil {
				return groupcommit.Result{}, err
			}
			return groupcommit.Result{Write: at, Verdict: verdict}, nil
		})
	}
	// failed is the event whose handler failed the work's last run, -1 for
	// none: the work runs on Do's goroutine, never twice at once.
	failed := -1
	work := func(events []B) groupcommit.Work[*sql.Tx] {
		return func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
			failed = -1
			at := read
			verdicts := make([]error, 0, len(events))
			for i := range events {
				verdict, err := s.applyGroup(ctx, tx, key, &events[i], &at)
				if err != nil {
					failed = i
					return groupcommit.Result{}, err
				}
				verdicts = append(verdicts, verdict)
			}
			return groupcommit.Result{Write: at, Verdict: Verdicts(verdicts)}, nil
		}
	}
	err := s.group.Do(ctx, text, len(events), work(events))
	if err == nil || ctx.Err() != nil {
		return err
	}
	// A handler's failure fails the key's work: nothing of it commits. The
	// events before the failing one then commit without it, in a work of
	// their own, and the failing one comes first in the key's next batch,
	// where the engine retries it (or skips or holds it, for a handler's
	// Skip or Hold) as for one event: what a failure costs the events
	// before it is one more run.
	if failed > 0 {
		return s.group.Do(ctx, text, failed, work(events[:failed]))
	}
	_, skip := runtime.IsSkip(err)
	_, hold := runtime.IsHold(err)
	if failed == 0 && (skip || hold) {
		return Verdicts([]error{err})
	}
	return err
}

// applyGroup applies ev, an event of key, in tx, the transaction of the
// key's group, from the key's version and state at. The guards decide
// first, as handle does: the verdict is a Skip or a Hold when they do not
// let ev through. Otherwise the handler is called with tx, and at advances
// to ev (also for an event the handler does not implement, whose verdict
// is a SkipApplied). err is a failure of ev: the work fails.
func (s *subscriber[K, E, B]) applyGroup(ctx context.Context, tx *sql.Tx, key K, ev *B, at *durable.KeyState) (verdict, err error) {
	en := s.en
	r, err := en.ruleOf(key, ev)
	if err != nil {
		return nil, err
	}
	var version uint64
	if en.versioned() {
		version = en.versionOf(ev)
		if v := CheckVersion(version, at.Version, r.Snapshot); v != nil {
			return s.skip(key, ev, v), nil
		}
	}
	reason, err := en.stateReason(key, at.State, r)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		if en.versioned() {
			at.Version = version // a skipped event still uses up its version
			return s.skip(key, ev, runtime.SkipApplied(reason)), nil
		}
		s.duplicate(ctx, key, ev, r, at.State, reason)
		return s.skip(key, ev, runtime.Skip(reason)), nil
	}
	err = s.tx.Call(ctx, tx, key, *ev)
	unimplemented := errors.Is(err, runtime.ErrUnimplemented)
	if err != nil && !unimplemented {
		return nil, err
	}
	if en.versioned() {
		at.Version = version
	}
	if r.To != "" {
		at.State = r.To
	}
	return acknowledged(unimplemented), nil
}
