// Command ordergen-parked is the operator's tool for the keys that ordergen
// parked in a durable store (runtime/sqlstore: SQLite or PostgreSQL). It is
// a separate binary from ordergen, so that the code generator that services
// pin with go get -tool links no database driver.
//
// Usage:
//
//	ordergen-parked [-store DSN] [-create] list [NAMESPACE]
//	ordergen-parked [-store DSN] show NAMESPACE KEY
//	ordergen-parked [-store DSN] replay [-wait DURATION] NAMESPACE KEY
//	ordergen-parked [-store DSN] discard [-wait DURATION] NAMESPACE KEY
//	ordergen-parked [-store DSN] wait [-timeout DURATION] ID
//	ordergen-parked [-store DSN] cancel ID
//	ordergen-parked [-store DSN] requests [-n N]
//	ordergen-parked [-store DSN] serve [-addr HOST:PORT] [-actions]
//	ordergen-parked [-store DSN] outbox [list [ENTITY]]
//	ordergen-parked [-store DSN] outbox show [-n N] ENTITY KEY
//	ordergen-parked [-store DSN] outbox retry ENTITY KEY
//	ordergen-parked [-store DSN] outbox discard ENTITY KEY
//	ordergen-parked [-store DSN] outbox seed ENTITY KEY VERSION
//
// DSN is a postgres:// URL or a SQLite file path (see
// runtime/sqlstore/dsn); it defaults to $ORDERGEN_STORE. A SQLite file that
// does not exist is an error that names the path, so that a mistyped path
// does not look like a store with nothing parked; -create makes an empty
// store there instead. A namespace is a subscriber's name: "Account" for an
// entity's first subscriber, "Account/audit" for the others (the generated
// AccountSubscriberName). A namespace that holds nothing in the store, or a
// key that is not parked, is an error that names the closest one, ignoring
// case ("did you mean Account?").
//
// From a service's module, with ordergen already a tool of it, the tool is
// added at the same version with
//
//	go mod edit -tool=github.com/ordergen/ordergen/cmd/ordergen-parked
//	go mod tidy
//	go tool ordergen-parked -h
//
// (go get -tool github.com/ordergen/ordergen/cmd/ordergen-parked does the
// same once the module is published).
//
// list prints the parked keys of one namespace, or of every namespace, with
// their number of events, when they were parked and why, then the requests
// that are not finished, with their age. show prints a key's parked events
// in order: Seq, event name, attempts, when it was parked, its error (on
// the event that failed) and its encoding (the JSON of the entity's
// generated codec, on one line, as the codec meant it: <, > and & rather
// than the \u003c, \u003e and \u0026 that Go's encoder writes for HTML).
//
// Every text from the store reaches the terminal shown, never executed:
// reasons, errors, event names, payloads, keys, namespaces, the results of
// requests. A control character, an escape sequence (ESC ] 0; setting the
// window's title, ESC [ 2J clearing the screen), a C1 control, a bidi
// override or a byte that is not UTF-8 is written as an escape (\u001b,
// \u202e, \xff), in tables and in errors alike; keys are quoted when they
// would not read as one word.
//
// replay and discard cannot act on their own: a replay runs the service's
// handlers. They leave a request in the store, which the running service
// carries out with a sqlstore.Server for the entity (a replay or discard of
// the key in every subscriber where it is parked), and print its ID. With
// -wait they wait that long for the result; when no service has taken the
// request up by then (or the wait is interrupted), the request is
// cancelled, so that a service started later does not carry out what its
// asker gave up on. wait waits for a request made earlier (and leaves it
// pending when it gives up); cancel withdraws a request that no service
// has taken up; requests lists the latest ones with their results.
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
// outbox serves the transactional outbox (runtime/outbox), whose keys
// park in the store itself, apart from the subscribers' parks: a key whose
// sink refused an event until its relay gave up (Config.ParkAfter, or a
// permanent error) holds its unsent events there. ENTITY is the schema's
// entity ("Account"). outbox list prints each entity's unsent events, the
// age of the oldest, and its parked and retrying keys with their reasons;
// outbox show a key's unsent events in version order. A relay needs no
// handler to resume a key, so retry and discard act at once in the store
// (no request, no running service): retry lets a parked or retrying key
// flow again from its first unsent event; discard drops its unsent events,
// so that its consumers find a gap in its versions (their guards hold, park
// or resync the key). outbox seed numbers a key's first outbox event
// VERSION+1, for a service that adopts the outbox with versions it
// numbered before (only a key without outbox events). The console of serve
// shows the outbox's keys that do not flow as a transport; with -actions,
// its Retry and Discard buttons act on them as outbox retry and discard do.
//
// Exit status: 0 on success, 1 when the store fails or is missing, a name
// does not match, a request fails, is cancelled or is not done in time, 2
// for a usage error.
package main
