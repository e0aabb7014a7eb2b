// Package runtime is for handler authors and the code ordergen generates:
// the per-key ordered dispatch engine that generated dispatchers run on,
// its configuration and policies, topics, outcomes, errors, and the guard
// and park stores with their in-memory implementations. It can also be
// used directly. The contracts for other audiences are packages of their
// own: runtime/transport for transport authors, runtime/meter for metrics
// adapters, runtime/durable for durable-store authors.
//
// # Lanes
//
// An [Engine] runs each key's events in order on a bounded pool of workers.
// A key whose events run without trouble needs nothing of its own: its
// events wait in their shard's inbox and a worker runs them inline (see
// Dispatch). A key that needs more (a retry, a held event, a park, a hot
// key the watchdog moves aside, every key of a conflating or batch engine)
// gets a lane: a FIFO of that key's events, removed the moment it empties.
// The engine guarantees:
//
//   - Order: for one key, if submitting e1 returned before submitting e2
//     began, e1 reaches its final outcome before the handler sees e2, and
//     two events of one key never run at once.
//   - Isolation: a slow, retrying or parked key delays only itself. At most
//     Config.MaxActive keys are in progress at once, which is also the most
//     worker goroutines the engine starts; a key waiting for a retry holds
//     no worker. Goroutines never grow with the number of keys, and an idle
//     key holds no memory in the engine (the in-memory guard stores are
//     another matter: see Guards). (One bound applies: see Dispatch below.)
//   - Liveness: no key waits behind keys that are not its own. A key (a
//     lane) that used a budget of 256 events while other work waits goes to
//     the back of the run queue, and work that just became runnable goes
//     ahead of work that already had a turn, but for one such turn in every
//     five tasks taken (so that new work cannot starve a busy key): work
//     that becomes runnable while no other new work waits is taken by a
//     worker before the busy keys handle more than (Config.MaxActive+1) x
//     256 further events (then the CPU that worker gets decides when it
//     starts). An event of a key without a lane becomes runnable with its
//     shard's inbox; while a worker runs that inbox, the event waits for
//     the end of that batch, which the watchdog bounds in time, not in
//     events (see Dispatch). Every release of backlog room wakes the
//     submitters waiting for it, and the stack never grows with the work
//     done.
//   - Accounting: every accepted event reaches exactly one outcome (handled,
//     skipped by a guard, parked, dead-lettered, dropped by a declared
//     policy, conflated, withdrawn, or discarded from the park by an
//     operator), each counted in [Stats]. A refused submission returns an
//     error testable with errors.Is: [ErrBacklogFull], [ErrClosed]. At every
//     quiescent point Accepted + Restored == Handled + Skipped + Parked +
//     DeadLettered + Dropped + Discarded + Conflated + Withdrawn + Pending.
//   - Bounded memory: Backlog.PerKey bounds one key's pending events and
//     Backlog.Total all of them, with a [FullPolicy]: [Reject], [Block]
//     (honours the submitter's context), [DropOldest], [DropNewest], or
//     [BlockThenReject] (block up to Backlog.Wait, then reject; timeout in a
//     schema). Events parked in the engine's memory (the
//     default park) count too: a key's park and pending events together
//     never pass PerKey. An event's room, in its key's limit and then in
//     the total, is given back and the event counted in Stats before its
//     outcome is reported, so a transport that learns of an outcome finds
//     the room, on every path. Where the room passes to another event it
//     is not given back: an event conflated or dropped when submitted hands
//     it to the event that replaced it, an event parked in memory keeps it
//     while parked, and an event replayed from a park outside memory hands
//     it to the replay's next page (the replay gives it back when it ends).
//     A submission never waits for room only an operator can make (its key
//     is parked with a full park, or parked events fill the total) nor from
//     inside one of the engine's own handlers (it would wait for itself):
//     under Block and BlockThenReject it fails at once, saying why.
//
// # Dispatch
//
// Submit appends an event to its key's lane when the key has one, and
// otherwise to its shard's inbox (keys are spread over shards by a seeded
// hash). A worker takes a shard's inbox and runs its events inline, in
// order, without making lanes: a key that has no lane has its events
// nowhere else, and one worker at a time runs a shard's inbox, so order
// holds. This keeps the common case close to the cost of an unordered
// worker pool. A key gets a lane when its event fails, is held or is parked,
// and its later events follow it there. An inline batch is the inbox as
// the worker found it; what arrives meanwhile is the shard's next turn,
// behind the tasks that wait. A handler that blocks holds up the rest of its
// inline batch for at most about a millisecond: a watchdog, run on each tick
// of the engine's clock, moves the rest of a batch that made no progress
// since the last tick (or of a long batch while workers sleep) into lanes
// that other workers run, starting workers up to MaxActive. While the
// process has more runnable goroutines than CPUs, a worker without progress
// may only be waiting for a CPU, and moving its batch gains nothing: the
// watchdog then waits 20 ticks (about 20ms) before it moves one, and moves
// a long batch that makes progress only when one key holds much of it (a
// hot key gets its lane, and no longer holds up its batch-mates). A conflating
// engine gives every key a lane when its first event arrives, so
// conflation applies at the door; an engine with a batch handler moves
// each inbox into lanes in one go. In both, a worker keeps the lanes it
// takes over in a deque of its own, which idle workers steal from, and
// the watchdog wakes or starts a worker to steal from one stuck in a
// handler. scheduler.go, in the source, tells the life of an event, the
// lock rule and what one event costs.
//
// # Failures
//
// A failed attempt is retried at the head of its lane, with exponential
// backoff and full jitter ([Retry]); each attempt gets a context with the
// per-attempt Config.Timeout; a panic is recovered and counts as a failed
// attempt. A handler marks an error that retrying cannot fix with
// [Permanent]. When attempts run out, [ExhaustedPolicy] decides:
//
//   - [ParkKey] sets the event and every later event of its key aside, in
//     order; later submissions for the key join the park. By default the
//     park is in the engine's memory and counts against the backlog; a
//     [ParkStore] in Config.Parks (a durable one) keeps it outside.
//     [Engine.Replay] runs the park again in order, loading it a page at a
//     time (from a store, as the backlog has room), and unparks the key when
//     all succeed; [Engine.Discard] removes it (its events' outcome:
//     Discarded). Other keys are not affected. An operator parks a stuck
//     key at once with [Engine.ParkNow], which takes its events away from a
//     handler that may never return (that handler runs on, its result
//     ignored), or ends the running attempt's context with
//     [Engine.CancelAttempt] and lets the policy follow; [Engine.KeyStatus]
//     says what a key runs, and since when.
//   - [SendToDeadLetter] hands the event to a [DeadLetterSink] and goes on with
//     the key's next event, giving up order for that key.
//   - [DropEvent] counts the event as dropped (at-most-once delivery).
//
// # Guards
//
// Generated handlers guard against duplicates, stale and early events with
// a per-key version ([VersionStore]) and forward-only states ([StateStore]).
// They report their verdict with [Skip] (a duplicate or stale event:
// counted, not retried), [SkipApplied] (a late transition or an event the
// handler does not implement, whose version the guard stored: counted as
// skipped, and the key moves on as after a handled event) or [Hold] (an
// event ahead of a gap: kept in the key's resequencer and offered again
// after each handled or SkipApplied event of the key, up to Config.MaxHeld
// events and Config.MaxHold time, after which the key is parked with the
// reason). With Config.Resync ([ResyncFunc]) a key whose bound is hit is
// first brought up to date from the source of truth: its held events are
// then judged again (those the new state covers are skipped), and the key
// is parked only when the resync keeps failing.
//
// The in-memory stores ([MemoryVersionStore], [MemoryStateStore], the
// defaults) keep an entry for every key they have seen, for the life of the
// process: they grow with the number of keys. They are never evicted, since
// a key that was forgotten would take a stale or duplicate event for a new
// one. A service with an unbounded key space keeps its guards in a durable
// store (runtime/sqlstore), which holds them outside the process.
//
// # Durable stores
//
// The in-memory stores are the defaults. A durable store keeps versions,
// states and parked events outside the process; runtime/sqlstore is one
// on SQLite and PostgreSQL, and a generated dispatcher takes it as its
// store. The plumbing that store authors use (text keys, raw events,
// codecs, transactions a handler writes in) is in runtime/durable.
//
// # Other modes
//
// Config.Conflate keeps only the newest pending event of a key (for state
// that only matters at its latest value, such as a location; never for a
// ledger). [NewBatch] hands a [BatchHandler] up to Config.BatchSize pending
// events of one key at once, in order, waiting up to Config.Linger for a
// batch to fill; a generated batch guard decides its events one by one
// (runtime/genimpl's Verdicts). A [Topic] fans events out to several
// subscribers, each with its own engine, so a slow subscriber never holds
// up another; order is then per key and subscriber. Its Replay, Discard,
// CancelAttempt, ParkNow, ParkedKeys, Health and Stats ask every subscriber and name each by its
// Config.Name (generated dispatchers are built on them).
//
// # Metrics
//
// Config.MeterProvider records the engine's metrics through the small
// interface of runtime/meter, which also names them; the runtime imports no
// metrics library. runtime/otelmetrics adapts OpenTelemetry to it, and
// runtime/metricstest is an in-memory one for tests. Without a provider the
// hot path pays one nil check; with one, recording allocates nothing.
//
// Config.Tracer is told where each attempt starts and ends and where each
// event retires, and gives the handler its context (trace.go): the
// runtime imports no tracing library either. runtime/oteltrace makes each
// attempt an OpenTelemetry span of the trace its event was sent in.
//
// # Shutdown
//
// [Engine.Close] stops accepting, drains, and stops every goroutine it
// started. If its context ends first it cancels running handlers and
// returns a [*CloseError] that says how many events of which keys were left.
//
// # Transports
//
// Across processes, partition by key at the source (a Kafka partition) and
// run an engine in each consumer: runtime/kafka does. The contract that
// transports are built on (sinks, sources, ownerships, settlement) is in
// runtime/transport; what it asks of the engine is Config.OnOutcome and
// the engine's side for transports ([EngineForTransport]):
// [TransportEngine.SubmitTagged] and [TransportEngine.Withdraw].
//
// # Words
//
// Each word below means one thing in this package and its documentation.
//
//   - accepted: Submit returned nil; the engine owns the event until its
//     outcome. refused: Submit returned an error (Stats.Rejected).
//   - pending: accepted, without an outcome yet (Stats.Pending).
//   - queued: waiting to be taken by a worker: an event in its lane's queue
//     or its shard's inbox, a lane or a shard's task in the run queue.
//   - inline: run by the worker that took its shard's inbox (an inline
//     batch), without a lane.
//   - lane: the FIFO of one key's pending events, for a key that needs one
//     (see Lanes); removed when it empties.
//   - spill: the watchdog (or Withdraw) moves the rest of an inline batch,
//     and its shard's inbox, into lanes; the key of the event running then
//     gets an owned lane, which the batch's worker goes on with.
//   - take, turn: a worker takes a lane's events a few at a time (a take),
//     and runs a lane for up to a budget of 256 events while other work
//     waits (a turn).
//   - held: of an event, set aside by a guard's [Hold] in its key's
//     resequencer until its gap fills, and nothing else (a mutex is held as
//     anywhere).
//   - parked: set aside, with every later event of its key, under
//     [ParkKey] (or when a resequencer's bound is hit, or the dead-letter
//     sink fails), until [Engine.Replay] or [Engine.Discard].
//   - outcome: what became of an accepted event ([Outcome]): handled,
//     skipped, parked, dead-lettered, dropped (by a declared policy:
//     [DropEvent] when attempts run out, [DropOldest] or [DropNewest] when
//     a limit is reached), conflated, withdrawn, or discarded (by an
//     operator's Discard of a park).
//   - retire: an event with an outcome leaves the engine's books: its room
//     is given back, it is counted in Stats, and then reported (see
//     Bounded memory).
//   - report: a call of Config.OnOutcome with an event's outcome.
//   - room: the space an event takes in a backlog limit, its key's
//     (Backlog.PerKey) and the total (Backlog.Total), from when it is
//     accepted until it retires.
//   - headroom: how many more events a shard can accept before one of its
//     keys without a lane could reach Backlog.PerKey (what spares
//     admission a count).
//   - reserve: the room in Backlog.Total that a replay of a park outside
//     memory holds for its next page.
//   - settle: what a transport does with a message once the events it
//     carries reached their outcomes: acknowledge it, commit past it, or
//     have it delivered again (runtime/transport's Settlement). The engine
//     never settles.
//   - timeout: Config.Timeout, the bound on one attempt. (The schema's
//     when_full: timeout is [BlockThenReject].)
//   - dead letter: an event handed to Config.DeadLetter under
//     [SendToDeadLetter].
//   - invalid configuration: [ErrInvalidConfig], here and in each
//     transport package.
package runtime
