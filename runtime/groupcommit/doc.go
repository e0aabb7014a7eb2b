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
// are applied in order. With a batch engine (runtime.NewBatch):
//
//	c, err := groupcommit.New[*sql.Tx](store, "Account", groupcommit.Config{Name: "Account"})
//	eng, err := runtime.NewBatch(func(ctx context.Context, key string, events []Event) error {
//		return c.Do(ctx, key, len(events), func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
//			// the guards (genimpl.CheckVersion per event) and the handler's writes in tx
//			return groupcommit.Result{Write: newState, Verdict: genimpl.Verdicts(verdicts)}, nil
//		})
//	}, cfg)
//	defer c.Close() // after eng.Close
//
// The engine settles the events (their outcomes, the transports' acks,
// Kafka's commits) when Do returns, and so only after their group
// committed.
//
// # How a group runs
//
// A group is a transaction: BeginGroup reads (and on PostgreSQL locks) the
// versions and states of all its keys at once; then the keys' works run one
// at a time, each on the goroutine of its own Do call (the committer hands
// it the turn and waits for its result), under a context derived from Do's:
// a work runs under its engine attempt's deadline and panic recovery, and
// the committer never runs user code itself. Commit writes the versions and
// states that changed in one write and commits. While one group commits the
// next fills: Config.MaxGroups groups may be open at once.
//
// # The rules
//
// The rules, which docs/durable-stores.md repeats for users:
//
//   - A group begins with the keys that are waiting when a transaction is
//     free, and waits at most Linger for more, up to MaxEvents events. A
//     key's events are never split between groups.
//   - A key's work that fails (an error or a panic) rolls back the group's
//     transaction at most once: the group runs again without it, with a
//     savepoint before each key from then on, so that a second failure
//     undoes only its own key's writes. The failing key's Do returns the
//     error (or panics on); the engine retries it as its policy says, in a
//     later group.
//   - A key's work that runs longer than MaxWork is evicted: its context
//     ends with ErrEvicted, the committer rolls the group back without
//     waiting for it and runs the group again without it, and the key's
//     work runs once more on its own, in a transaction of its own, once it
//     returned. Its group-mates wait for it at most once.
//   - A conflict with another writer (a deadlock, a serialization failure,
//     a busy database, a version moved), from BeginGroup, a work or
//     Commit, runs the whole group again, up to MaxRetries times; then
//     every key's Do returns the error. Any other error of the group's
//     transaction reaches every key's Do.
//   - A key whose Do context ends while it waits for a group leaves the
//     queue, and Do returns the context's error; a key whose context ended
//     before its turn in a group leaves the group without running.
//   - A crash before the commit rolls the whole group back; the guards
//     make redelivery apply each event once.
//
// A work may therefore run more than once for the same events: it must
// write through the transaction only.
//
// Rolling the group back on a first failure, rather than taking a
// savepoint before every key from the start (Config.Savepoints), is the
// default because it measured faster: a savepoint costs a statement per
// key (a round trip on PostgreSQL) on every group, a rerun only on the
// groups that see a failure. BenchmarkGroupIsolation, with a row written
// per event: with no failures regrouping ran at about 260k events/s
// against 190k on PostgreSQL and 440k against 370k on SQLite; with 1% of
// works failing (about one group in seven), 214k against 200k on
// PostgreSQL, and a tie on SQLite (about 380k). With failures in most
// groups, savepoints from the start would win.
//
// # Metrics
//
// Config.MeterProvider receives [MetricCommitted], [MetricSize],
// [MetricRollbacks] (by [AttrReason]) and [MetricEvictions]; [Committer.Stats]
// has the same counts. Evictions and rollbacks are logged with the key and
// the reason.
package groupcommit
