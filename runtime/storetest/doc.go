// Package storetest is for authors of durable stores, and is their conformance
// suite: every implementation of durable.Store (the in-memory one here,
// runtime/sqlstore on SQLite and PostgreSQL) runs the same tests, so they keep
// the contract of the in-memory stores:
//
//   - versions and states: compare-and-set from many goroutines and handles
//     never advances a key twice from one value; a stale compare is
//     refused and changes nothing; namespaces do not see each other;
//   - parks: Append assigns increasing Seq in park order; Keys lists the
//     oldest park first with its reason and size; Read returns the events
//     in order; Remove and Clear unpark a key once its park is empty;
//     everything survives closing one handle and opening another.
//
// A store that commits groups (durable.GroupTxStore) also runs RunGroups
// with a GroupHarness, which says how a handler writes in the group's
// transaction and how the test reads those writes back: a group reads what
// BeginKey and other groups stored; its commit stores all its writes, the
// handlers' too, at once; a rollback, also after a failed commit, keeps
// nothing; a rollback to a savepoint undoes only what followed it; a key
// moved between the read and the commit fails the commit with an error
// Retryable accepts and nothing kept; groups over disjoint keys are open at
// once and over overlapping keys wait for each other (unless the store runs
// one transaction at a time: GroupHarness.Serial); and goroutines running
// groups over random overlapping keys, with rollbacks, savepoints and
// cancelled commits, neither lose nor double an increment. Memory has no
// transactions: it runs Run only.
//
// A store's own test calls Run with a Harness that opens handles on one
// database. Increment is the compare-and-set loop that the suite and the
// two-process tests of the stores share.
package storetest
