// Command ordergen-parked is the operator's tool for the keys that ordergen
// parked in a durable store (runtime/sqlstore: SQLite or PostgreSQL). It is
// a separate binary from ordergen, so that the code generator that services
// pin with go get -tool links no database driver.
//
// Usage:
//
//	ordergen-parked [-store DSN] list [NAMESPACE]
//	ordergen-parked [-store DSN] show NAMESPACE KEY
//	ordergen-parked [-store DSN] replay [-wait DURATION] NAMESPACE KEY
//	ordergen-parked [-store DSN] discard [-wait DURATION] NAMESPACE KEY
//	ordergen-parked [-store DSN] wait [-timeout DURATION] ID
//	ordergen-parked [-store DSN] requests [-n N]
//	ordergen-parked [-store DSN] serve [-addr HOST:PORT] [-actions]
//
// DSN is a postgres:// URL or a SQLite file path (see
// runtime/sqlstore/dsn); it defaults to $ORDERGEN_STORE. A namespace is a
// subscriber's name: "Account" for an entity's first subscriber,
// "Account/audit" for the others.
//
// list prints the parked keys of one namespace, or of every namespace, with
// their number of events, when they were parked and why. show prints a
// key's parked events in order: Seq, event name, attempts, when it was
// parked, its error (on the event that failed) and its encoding (the JSON of
// the entity's generated codec).
//
// replay and discard cannot act on their own: a replay runs the service's
// handlers. They leave a request in the store, which the running service
// carries out with a sqlstore.Server for the entity (a replay or discard of
// the key in every subscriber where it is parked), and print its ID. With
// -wait they wait that long for the result. wait waits for a request made
// earlier; requests lists the latest ones with their results.
//
// serve runs the operator's web console (runtime/console) over the store,
// at -addr (default 127.0.0.1:8080), until interrupted: every entity with
// parked keys, its subscribers' parked keys and parked events a page at a
// time, what the guards stored for a key, and the latest requests with their
// results. It is read-only unless -actions is given; then its Replay and
// Discard buttons (and its JSON API's) leave requests, as replay and discard
// do, for the running service to carry out. Anyone who can reach -addr can
// then make them: keep it on loopback, or behind a proxy that authenticates.
// The console's counters, backlog and transports live in the service: mount
// runtime/console there to see them.
//
// Exit status: 0 on success, 1 when the store fails, a request fails or is
// not done in time, 2 for a usage error.
package main
