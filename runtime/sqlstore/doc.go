// Package sqlstore is for services whose guards and parks must outlive the
// process: it keeps ordergen's guard versions, states and parked events in a
// SQL database, so that they survive restarts and are shared by replicas:
// SQLite (embedded, one file: the default; see runtime/sqlstore/sqlite) or
// PostgreSQL (see runtime/sqlstore/postgres), through database/sql. A Store
// implements durable.GroupTxStore[*sql.Tx], and so durable.TxStore[*sql.Tx].
//
// # Namespaces
//
// One store serves many entities and subscribers: each has a namespace of
// its own, and generated dispatchers use the subscriber's name ("Account",
// "Account/audit"). Keys are stored as text (durable.EncodeKey), parked
// events as the name and bytes of the entity's generated codec.
//
// # Effectively once
//
// BeginKey starts a transaction and reads the key's version and state in it
// (locked on PostgreSQL with SELECT ... FOR UPDATE; SQLite transactions hold
// the write lock). The generated guard decides there, hands the *sql.Tx to
// the handler, and KeyTx.Commit advances the version and state with a
// conditional UPDATE ... WHERE version = read and commits. The handler's
// writes and the version advance commit together or not at all, so a crash
// between them neither applies an event twice nor skips one: the event is
// redelivered (at-least-once transports) and applied, or found applied and
// skipped. Writes the handler makes anywhere but the transaction (a call to
// another service) are outside this guarantee.
//
// # Group commit
//
// BeginGroup (what runtime/groupcommit calls) does for many keys of a
// namespace at once what BeginKey does for one, in a few statements
// whatever their number: one read of all their versions and states when it
// begins, one write of all the new ones in GroupTx.Commit, then the
// commit. On PostgreSQL the read is SELECT ... WHERE key = ANY($2) ORDER BY
// key COLLATE "C" FOR UPDATE: the rows are locked in byte order of the
// keys, so groups of several processes over overlapping keys wait for each
// other instead of deadlocking (a deadlock that happens anyway, over keys
// created meanwhile, is Retryable). The write is one statement: an UPDATE
// FROM unnest of arrays of the keys that had rows, where their version and
// state are still those read, and an INSERT of the keys that had none, ON
// CONFLICT updating only a row with version 0 and state "". A key without
// a row is not locked by the read (there is no row to lock, and taking
// one first would cost a statement per group): the compare-and-set of
// the write is what keeps two writers from both advancing it from 0, and
// the later one's Commit fails with ErrConflict, naming the key, with
// everything the group wrote rolled back. On SQLite the transaction holds
// the database's write lock from its start; the keys go as one JSON array
// parameter (json_each), so that a statement stays short whatever the
// group's size, and keys or states that JSON cannot carry as they are (NUL,
// invalid UTF-8) fall back to a statement per key. A Commit refused for
// its writes (a key not in the group, or twice) writes nothing and leaves
// the transaction open; any other failure rolls it back. GroupTx.Savepoint and
// RollbackTo are SQL savepoints, their names [a-z0-9_]+. Retryable accepts
// ErrConflict, PostgreSQL's serialization failures (40001) and deadlocks
// (40P01), and SQLite's SQLITE_BUSY and SQLITE_LOCKED.
//
// # Tables
//
// New creates and migrates the tables ordergen_keys, ordergen_parks,
// ordergen_parked_events and ordergen_requests, and (schema version 2) the
// transactional outbox's ordergen_outbox, ordergen_outbox_seq and
// ordergen_outbox_keys, recording the version in ordergen_schema. Migrations are idempotent and run in one transaction that
// no other migration runs beside (pg_advisory_xact_lock on PostgreSQL, BEGIN
// IMMEDIATE on SQLite), so replicas may start at once. A database migrated
// by a newer ordergen is refused with ErrSchemaTooNew.
//
// # The transactional outbox
//
// AppendOutbox (what a generated AccountOutbox calls) numbers an event by
// its key's row of ordergen_outbox_seq and inserts it into ordergen_outbox,
// in the caller's transaction; SeedOutbox starts a key's sequence. A relay
// (runtime/outbox) claims keys' unsent events with ClaimOutbox, holding
// each key against every other relay until the claim commits (a row lock
// of ordergen_outbox_keys on PostgreSQL, the write lock on SQLite), and
// marks what it sent with OutboxClaim.Commit. On PostgreSQL a trigger
// notifies OutboxChannel of every new row, for relays that LISTEN through
// the store's Listener. Operators read OutboxBacklog, OutboxKeys and
// OutboxEvents, and let a key flow again with RetryOutboxKey or
// DiscardOutboxKey; PruneOutbox deletes sent events.
//
// # Operators
//
// Namespaces and ParkedNamespaces name the subscribers that used the store,
// and Parks(namespace) reads what is parked in one. Request leaves a replay
// or discard request in ordergen_requests that the running service carries
// out with a Server (a replay needs the service's handlers); CancelRequest
// withdraws one that no service has taken up yet, Unfinished lists those
// not finished, and RequestByID and Requests read their results. The
// ordergen-parked command is the operator's tool over these.
package sqlstore
