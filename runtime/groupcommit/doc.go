// Package groupcommit is for generated transactional dispatchers, and for
// anyone who drives an engine over a durable.GroupTxStore by hand: it forms
// groups from the keys that are ready and commits each group in one
// transaction (group commit), so that effectively-once handling runs at the
// speed of batched writes rather than of one transaction per event.
//
// A [Committer] serves one namespace of one store. Each engine worker calls
// [Committer.Do] with its key's batch of events and the [Work] that applies
// them; Do returns once the group the work joined has committed. A key's
// worker waits in Do, so a key is in at most one open group and its events
// are applied in order.
//
// The rules, which the README repeats:
//
//   - A group begins with the keys that are waiting when a transaction is
//     free, and waits at most Linger for more, up to MaxEvents events.
//   - A key's work that fails rolls back the group's transaction at most
//     once: the group runs again without it, with a savepoint before each
//     key from then on, so that a second failure undoes only its own key's
//     writes. The failing key's Do returns the error; the engine retries it
//     as its policy says, in a later group.
//   - A key's work that runs longer than MaxWork is evicted: its context
//     ends with ErrEvicted, the group runs again without it, and the key's
//     work runs once more on its own, in a transaction of its own. Its
//     group-mates wait for it at most once.
//   - A conflict with another writer (a deadlock, a serialization failure,
//     a version moved) runs the whole group again, a bounded number of
//     times.
//   - A crash before the commit rolls the whole group back; the guards
//     make redelivery apply each event once.
//
// A work may therefore run more than once for the same events: it must
// write through the transaction only.
package groupcommit
