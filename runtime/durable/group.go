package durable

import "context"

// GroupTxStore is a TxStore that also commits the work of many keys in one
// transaction: a group commit. runtime/groupcommit forms the groups; a store
// reads and locks all their versions and states at once, and writes all the
// new ones at once, so that a group of a thousand events costs a few round
// trips instead of a thousand transactions.
type GroupTxStore[T any] interface {
	TxStore[T]
	// BeginGroup starts a transaction for keys of namespace (distinct, in
	// any order) and reads their versions and states in it in one read,
	// locking them against other writers, in sorted order so that groups
	// of several processes cannot deadlock each other over them, until the
	// transaction ends.
	BeginGroup(ctx context.Context, namespace string, keys []string) (GroupTx[T], error)
	// Retryable reports whether err, returned by a group's transaction or
	// its Commit, is a conflict with another writer that is worth running
	// the group again for: a deadlock, a serialization failure, a busy
	// database, a version moved by another writer.
	Retryable(err error) bool
}

// KeyState is a key's version and state as a group read or writes them.
type KeyState struct {
	// Version is the key's version, 0 when none is stored.
	Version uint64
	// State is the key's state, "" when none is stored.
	State string
}

// KeyWrite is the new version and state of one key of a group.
type KeyWrite struct {
	// Key is the key, one of the group's.
	Key string
	// KeyState is the key's new version and state.
	KeyState
}

// GroupTx is a transaction begun by GroupTxStore.BeginGroup. The group's
// handlers write in Tx one after another; Commit writes the keys' new
// versions and states and commits; anything else ends it with Rollback.
type GroupTx[T any] interface {
	// Tx is the transaction the handlers write in. They must not commit or
	// roll it back.
	Tx() T
	// Read returns key's version and state as BeginGroup read them. A key
	// that is not one of the group's reads as the zero KeyState.
	Read(key string) KeyState
	// Savepoint marks a point in the transaction that RollbackTo returns
	// to, undoing what was written since (one key's work) and nothing
	// before. Marking a name again moves it.
	Savepoint(ctx context.Context, name string) error
	// RollbackTo undoes what was written since the savepoint name.
	RollbackTo(ctx context.Context, name string) error
	// Commit stores writes (keys whose version or state changed; the
	// others may be left out) in one write, provided each key's version
	// and state are still what Read returned (an error that Retryable
	// accepts otherwise), and commits the transaction with everything the
	// handlers wrote in it.
	Commit(ctx context.Context, writes []KeyWrite) error
	// Rollback abandons the transaction. After Commit, or a second time, it
	// does nothing and returns nil.
	Rollback() error
}
