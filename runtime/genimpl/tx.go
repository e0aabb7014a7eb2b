package genimpl

import (
	"context"
	"errors"

	"github.com/ordergen/ordergen/runtime"
)

// The guards of a transactional subscriber without group commit. Each
// event (or batch, or resync) begins a transaction of the subscriber's
// store, in which the key's version and state are read and locked; the
// guards of handle decide; the handler writes in the transaction; and its
// writes commit together with the new version and state, so that an event
// is applied effectively once, even when the process dies in between. An
// event the handler does not implement commits the advance alone and is
// skipped; any other error rolls back.

// handleTx is the engine handler of a transactional subscriber.
func (s *subscriber[K, E, B]) handleTx(ctx context.Context, key K, v B) error {
	en := s.en
	r, err := en.ruleOf(key, &v)
	if err != nil {
		return err
	}
	tx, err := s.store.BeginKey(ctx, s.name, keyText(key))
	if err != nil {
		return en.errorf(key, "%w", err)
	}
	defer tx.Rollback()
	version, current := tx.Version(), tx.State()
	if en.versioned() {
		stored := version
		version = en.versionOf(&v)
		if verdict := CheckVersion(version, stored, r.Snapshot); verdict != nil {
			return s.skip(key, &v, verdict)
		}
	}
	reason, err := en.stateReason(key, current, r)
	if err != nil {
		return err
	}
	if reason != "" {
		if en.versioned() {
			// A skipped event still uses up its version.
			if err := tx.Commit(ctx, version, current); err != nil {
				return en.errorf(key, "store version: %w", err)
			}
			return s.skip(key, &v, runtime.SkipApplied(reason))
		}
		s.duplicate(ctx, key, &v, r, current, reason)
		return s.skip(key, &v, runtime.Skip(reason))
	}
	err = s.tx.Call(ctx, tx.Tx(), key, v)
	unimplemented := errors.Is(err, runtime.ErrUnimplemented)
	if err != nil && !unimplemented {
		return err
	}
	if r.To != "" {
		current = r.To
	}
	if err := tx.Commit(ctx, version, current); err != nil {
		return en.errorf(key, "commit: %w", err)
	}
	return acknowledged(unimplemented)
}

// resyncTx is resync for a transactional subscriber: the handler brings
// its data of key up to date in the transaction, which commits the
// version and state it reached as the key's.
func (s *subscriber[K, E, B]) resyncTx(ctx context.Context, key K, held []B) (int, error) {
	en := s.en
	tx, err := s.store.BeginKey(ctx, s.name, keyText(key))
	if err != nil {
		return 0, en.errorf(key, "%w", err)
	}
	defer tx.Rollback()
	version, state, err := s.tx.Resync(ctx, tx.Tx(), key)
	if err := s.checkResync(key, tx.Version(), version, state, err); err != nil {
		return 0, err
	}
	if !en.stated() {
		state = tx.State()
	}
	if err := tx.Commit(ctx, version, state); err != nil {
		return 0, en.errorf(key, "commit the resync: %w", err)
	}
	return s.covered(held, version), nil
}
