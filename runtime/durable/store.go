package durable

import (
	"context"

	"github.com/ordergen/ordergen/runtime"
)

// RawEvent is an event as a durable store keeps it: the type name and bytes
// of a Codec. Durable stores deal in keys as text (EncodeKey) and events as
// RawEvents; EncodedParks, EncodedVersions and EncodedStates give them the
// types of an engine.
type RawEvent struct {
	// Name is the event's type name (Codec.Encode's name).
	Name string
	// Data is the event's encoding.
	Data []byte
}

// Store is a store that keeps guard versions, states and parked events
// outside the process, in namespaces: every subscriber of every entity has its
// own (generated dispatchers use the subscriber's name, "Account" or
// "Account/audit"). Implementations are safe for concurrent use, also by
// several processes sharing one database; runtime/sqlstore is one.
type Store interface {
	// Versions returns the version store of namespace.
	Versions(namespace string) runtime.VersionStore[string]
	// States returns the state store of namespace.
	States(namespace string) runtime.StateStore[string]
	// Parks returns the park store of namespace.
	Parks(namespace string) runtime.ParkStore[string, RawEvent]
}

// TxStore is a Store whose transactions a handler can write in, so that
// the handler's own writes and the advance of the key's version and state
// commit together, or not at all: an event is then applied effectively once
// even when the process dies between the handler and the commit. T is the
// transaction type handlers receive (*sql.Tx for runtime/sqlstore).
type TxStore[T any] interface {
	Store
	// BeginKey starts a transaction for key in namespace and reads the key's
	// version and state in it, locking them against other writers until the
	// transaction ends.
	BeginKey(ctx context.Context, namespace, key string) (KeyTx[T], error)
}

// KeyTx is a transaction begun by TxStore.BeginKey. Generated guards read the
// key's version and state from it, hand Tx to the handler, and commit the new
// version and state with Commit; anything else ends it with Rollback.
type KeyTx[T any] interface {
	// Tx is the transaction the handler writes in. The handler must not
	// commit or roll it back.
	Tx() T
	// Version is the key's version as read when the transaction began, 0
	// when none is stored.
	Version() uint64
	// State is the key's state as read when the transaction began, "" when
	// none is stored.
	State() string
	// Commit stores version and state as the key's, provided they still are
	// what Version and State returned (an error otherwise), and commits the
	// transaction with everything the handler wrote in it.
	Commit(ctx context.Context, version uint64, state string) error
	// Rollback abandons the transaction. After Commit, or a second time, it
	// does nothing and returns nil.
	Rollback() error
}
