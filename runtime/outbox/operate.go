package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// The operator's actions on the keys that do not flow, for the console:
// the relay is the inspect.OutboxOperator of its entity's outbox. They act
// in the store (sqlstore.Store.RetryOutboxKey, DiscardOutboxKey), as
// ordergen-parked outbox retry and discard do, then read the outbox again,
// so that TransportStatus shows the key flowing at once.

var _ inspect.OutboxOperator = (*Relay[string, any])(nil)

// RetryKey lets entity's parked or retrying key flow again from its first
// unsent event, and wakes the relay to send it. entity must be the
// relay's Config.Entity; a key that flows is refused with an error wrapping
// runtime.ErrNotParked.
func (r *Relay[K, E]) RetryKey(ctx context.Context, entity, key string) (inspect.Result, error) {
	if err := r.ownEntity(entity); err != nil {
		return inspect.Result{}, err
	}
	if err := r.cfg.Store.RetryOutboxKey(ctx, entity, key); err != nil {
		return inspect.Result{}, flowing(err)
	}
	r.Wake()
	r.refreshAfterAction(ctx)
	return inspect.Result{Done: true, Message: fmt.Sprintf("key %s of the outbox of %s flows again from its first unsent event", key, entity)}, nil
}

// DiscardKey drops the unsent events of entity's parked or retrying key
// and lets it flow again: its consumers never see those versions, and
// their version guards find a gap there. entity must be the relay's
// Config.Entity; a key that flows is refused with an error wrapping
// runtime.ErrNotParked.
func (r *Relay[K, E]) DiscardKey(ctx context.Context, entity, key string) (inspect.Result, error) {
	if err := r.ownEntity(entity); err != nil {
		return inspect.Result{}, err
	}
	d, err := r.cfg.Store.DiscardOutboxKey(ctx, entity, key)
	if err != nil {
		return inspect.Result{}, flowing(err)
	}
	r.refreshAfterAction(ctx)
	msg := fmt.Sprintf("key %s of the outbox of %s had no unsent event; it flows again", key, entity)
	if d.Events > 0 {
		msg = fmt.Sprintf("discarded %d events of key %s of the outbox of %s (versions %d to %d); it flows again, and its consumers will see a gap before version %d",
			d.Events, key, entity, d.From, d.To, d.To+1)
	}
	return inspect.Result{Done: true, Events: d.Events, Message: msg}, nil
}

// ownEntity refuses an entity that is not the relay's.
func (r *Relay[K, E]) ownEntity(entity string) error {
	if entity != r.cfg.Entity {
		return fmt.Errorf("%w: the relay ships the outbox of %s, not of %q", inspect.ErrNotFound, r.cfg.Entity, entity)
	}
	return nil
}

// refreshAfterAction reads the outbox again; a failure is logged and
// leaves the last reading, which the next refresh replaces.
func (r *Relay[K, E]) refreshAfterAction(ctx context.Context) {
	if err := r.Refresh(ctx); err != nil {
		r.cfg.Logger.Warn("ordergen outbox: reading the outbox after an operator's action", "entity", r.cfg.Entity, "error", err)
	}
}

// flowing marks the store's refusal of a key that flows as not parked.
func flowing(err error) error {
	if errors.Is(err, sqlstore.ErrOutboxKeyFlowing) {
		return fmt.Errorf("%w: %w", runtime.ErrNotParked, err)
	}
	return err
}
