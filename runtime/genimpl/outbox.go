package genimpl

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// OutboxStore is the store a generated outbox writes into: a
// durable.OutboxStore of *sql.Tx transactions, such as runtime/sqlstore's.
type OutboxStore = durable.OutboxStore[*sql.Tx]

// TxStore is the store of a generated transactional dispatcher: a
// durable.TxStore of *sql.Tx transactions, such as runtime/sqlstore's.
type TxStore = durable.TxStore[*sql.Tx]

// Outbox is the generic part of a generated outbox (AccountOutbox embeds
// one): it writes an entity's events into the transactional outbox of a
// durable store, in the caller's own transaction, so that a change and the
// events that announce it commit together or not at all. Each event gets
// its key's next number from the outbox's own sequence (1, 2, 3... per
// key, never one twice, however many writers), which an entity with a
// version stamps into the event's version field before it is encoded. The
// relay of github.com/ordergen/ordergen/runtime/outbox (its Config.Entity
// is the entity's name, Entity) ships them to a sink in per-key order.
//
// Concurrent transactions appending to one key take turns at its sequence
// row: on PostgreSQL the second waits for the first to end (READ
// COMMITTED) or fails with a serialization error to retry (REPEATABLE
// READ, SERIALIZABLE), and transactions appending to the same keys in
// opposite orders can deadlock, as with any rows: append in a consistent
// order.
type Outbox[K comparable, E Event[K], B any] struct {
	en      *Entity[K, E, B]
	store   OutboxStore
	textKey bool
}

// NewOutbox returns the outbox of en's events in store, a generated
// NewAccountOutbox; a nil store is refused with runtime.ErrInvalidConfig.
func NewOutbox[K comparable, E Event[K], B any](en *Entity[K, E, B], store OutboxStore) (*Outbox[K, E, B], error) {
	if store == nil {
		return nil, fmt.Errorf("%w: %sOutbox needs a store", runtime.ErrInvalidConfig, en.Name)
	}
	return &Outbox[K, E, B]{en: en, store: store, textKey: stringKey[K]()}, nil
}

// Entity returns the name the outbox writes events under, the entity's:
// the Config.Entity of their relay.
func (o *Outbox[K, E, B]) Entity() string { return o.en.Name }

// PublishTx appends e (or what it points to) to the outbox in tx: it takes
// the next number of e's key (its version, stamped into e's version field,
// for an entity with a version), encodes e with the entity's codec and
// inserts it, all in tx, and returns the number. The relay sends it once tx
// commits; if tx rolls back, neither the event nor its number is left. It
// refuses a nil event and an event with an empty key, with an error
// wrapping runtime.ErrInvalidEvent. After an error, roll tx back.
func (o *Outbox[K, E, B]) PublishTx(ctx context.Context, tx *sql.Tx, e E) (uint64, error) {
	ev, _, ok := o.en.value(e)
	if !ok {
		return 0, fmt.Errorf("%w: nil %s event", runtime.ErrInvalidEvent, o.en.Name)
	}
	var zero K
	if o.textKey && ev.EventKey() == zero {
		return 0, fmt.Errorf("%w: %s event %s: key field %s is empty", runtime.ErrInvalidEvent, o.en.Name, ev.EventName(), o.en.KeyField)
	}
	return o.store.AppendOutbox(ctx, tx, o.en.Name, keyText(ev.EventKey()), func(v uint64) (durable.RawEvent, error) {
		stamped, err := o.stamp(ev, v)
		if err != nil {
			return durable.RawEvent{}, err
		}
		name, data, err := Encode(o.en, stamped)
		return durable.RawEvent{Name: name, Data: data}, err
	})
}

// stamp returns ev with its version field set to version, for an entity
// with a version (ev itself for one without). It sets the field by
// reflection: an outbox append is a database write, which costs far more.
func (o *Outbox[K, E, B]) stamp(ev E, version uint64) (E, error) {
	if !o.en.versioned() {
		return ev, nil
	}
	v := reflect.New(reflect.TypeOf(ev)).Elem()
	v.Set(reflect.ValueOf(ev))
	f := v.FieldByName(o.en.VersionField)
	switch {
	case f.CanUint() && !f.OverflowUint(version):
		f.SetUint(version)
	case f.CanInt() && version <= 1<<62 && !f.OverflowInt(int64(version)):
		f.SetInt(int64(version))
	default:
		return ev, fmt.Errorf("%s: %s event %s: version %d does not fit its field %s", o.en.Package, o.en.Name, ev.EventName(), version, o.en.VersionField)
	}
	return v.Interface().(E), nil
}

// Seed sets, in tx (nil: a transaction of its own), the number that key's
// first outbox event follows: its first event gets version+1. It is for a
// service that adopts the outbox with keys it numbered before: seed each
// with the last version its consumers saw, before its first outbox event.
// Seeding a key again at the same version is harmless; a key whose
// sequence is elsewhere (it has outbox events, or another seed) is refused
// (sqlstore.ErrOutboxSeeded).
func (o *Outbox[K, E, B]) Seed(ctx context.Context, tx *sql.Tx, key K, version uint64) error {
	return o.store.SeedOutbox(ctx, tx, o.en.Name, keyText(key), version)
}
