// Package states tests states as users mean them (issue 42) through the
// code generated from schema.yaml (package shipping, in shipping/), on the
// in-memory guards, SQLite and PostgreSQL (ORDERGEN_TEST_POSTGRES; its
// cases skip without it):
//
//   - with a version, the state guard skips only a move to a state ranked
//     below the current one (late); a second event to the current state
//     applies, since its version says it is newer (Shipment, Container);
//   - without a version, a move to the current state is skipped as a
//     duplicate, and the first such skip is logged once at debug level
//     (Parcel, Crate);
//   - an event with in: applies only while its entity is in one of the
//     states it lists, and is skipped with a reason otherwise;
//   - the generated test kit's in-order run fails on a stream whose events
//     the guards skip in publication order (a scan written with to: its
//     current state), naming each with its key, version and reason, and
//     passes once the schema uses in:.
//
// Each rule runs through every way the generated guards run: one event at
// a time in memory and over a store's guards (Shipment, Parcel), in a
// transaction (their transactional dispatchers), in batches (Container)
// with group commit (its transactional one), and in groups one event at a
// time (Crate's transactional one).
//
//	go test ./examples/states
package states
