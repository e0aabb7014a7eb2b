package durable

import "context"

// OutboxStore is a store with a transactional outbox: it numbers each
// key's events in the caller's own transaction and keeps them there until
// a relay (runtime/outbox) ships them, so that a change and the events
// that announce it commit together or not at all. Generated outboxes
// (AccountOutbox) write through it; runtime/sqlstore implements it, with T
// *sql.Tx.
//
// The producers' sequence is the outbox's own, one per entity and key,
// apart from the versions the consumers' guards store: the outbox is the
// single writer that numbers a key's events.
type OutboxStore[T any] interface {
	// AppendOutbox assigns key's next version in entity's outbox inside tx
	// (1 for a key never written nor seeded), calls encode with it, and
	// inserts what encode returns as the key's event of that version, in
	// tx. It returns the version. Concurrent transactions appending to one
	// key get consecutive versions, never the same one; a transaction
	// rolled back leaves neither its version nor its event behind. An
	// error of encode is returned as it is, wrapped; the caller then rolls
	// tx back.
	AppendOutbox(ctx context.Context, tx T, entity, key string, encode func(version uint64) (RawEvent, error)) (uint64, error)
	// SeedOutbox sets, in tx, the version that key's first outbox event
	// follows (its first event gets version+1), for a service that adopts
	// the outbox with entities whose versions it numbered before. It
	// refuses a key that already has a sequence, unless at version.
	SeedOutbox(ctx context.Context, tx T, entity, key string, version uint64) error
}
