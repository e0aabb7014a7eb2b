package runtime

// The scheduler, stage by stage, each in its file:
//
//	admission.go  Submit: the per-key and total limits, backlog room, the
//	              FullPolicy, conflation at the door
//	shard.go      shards: the inbox, the lanes' map, the per-key counts
//	headroom.go   the per-key limit of keys without a lane: a count of the
//	              shard's keys, and the headroom it leaves
//	runqueue.go   the run queue: ready tasks ahead of yielded ones, and
//	              when a task wakes a worker (pushInbox)
//	worker.go     the worker loop, its deque, and stealing between workers
//	turn.go       a turn of a lane: take, run, end the take
//	attempt.go    one attempt: its context, timeout, panics, cancellation
//	verdict.go    the outcome path: what becomes of an attempt's result
//	retire.go     retirement: every outcome leaves the books there
//	inline.go     inline batches: an inbox run without lanes
//	prefetch.go   the inline loop's prefetch of boxed events
//	watchdog.go   the clock's tick: stuck batches, stuck workers, deadlines
//	attemptctx.go an attempt's context: a deadline without a timer
//	timers.go     retry backoffs and the resequencer's hold timers
//	park.go       parking a key; replay.go: replay and discard
//	withdraw.go   Withdraw, for transports
//	lifecycle.go  Flush and Close
//	stats.go      Stats, TopBacklog, Stuck, Health; metrics.go: the meter
//
// # The life of an event
//
//  1. Admission. Submit locks the key's shard. A conflating engine replaces
//     the key's newest queued event (conflation at the door). Otherwise the
//     shard checks the key's count against Backlog.PerKey and the engine
//     takes room in Backlog.Total (Engine.load, takeRoom); without room
//     the FullPolicy decides. The event joins its key's lane when the key
//     has one (in a conflating engine every key gets one here), or else
//     the shard's inbox.
//  2. The run queue. The lane, or the shard's inbox, becomes a task: a
//     ready task, ahead of tasks that already used a whole turn (yielded).
//     In an engine whose keys run in lanes (a batch handler, conflation) a
//     ready lane goes to its shard's ready list instead, and the shard
//     becomes the task. A task wakes a sleeping worker, or starts one,
//     except an inbox's task while the workers in inline batches are at
//     least as many as the tasks waiting and one came back for a task
//     within the last tick: they take it when their batch ends. The tick
//     wakes workers for such tasks that still wait (pushInbox,
//     wakeWaiting), so a new key waits at most about a tick behind
//     handlers that block.
//  3. A worker takes the task. An inbox is run inline, in order, without
//     lanes (inline.go). In an engine whose keys run in lanes, the shard's
//     task hands its inbox, moved into lanes, and its ready lanes to the
//     worker's own deque, which an idle worker steals from
//     (dispatchLanes). An inline event whose verdict needs a lane (a
//     retry, a hold, a park, a dead letter) gives its key one, with the
//     key's later events. A lane's turn takes its events a few at a time,
//     runs them without the lock, and ends the take under it (endTake).
//  4. The verdict. judge (verdict.go) classifies every attempt's result
//     once. An event that reached its outcome leaves its key's count (its
//     lane, or the inline batch's position moves past it) and retires
//     (retire.go), the one point every outcome goes through, from every
//     path: it gives back its total room and wakes blocked submitters, is
//     counted, and only then is reported: a transport that learns of an
//     outcome finds the room given back.
//  5. A failed attempt waits for its backoff on a timer that holds no
//     worker, then the lane is ready again. A held event waits in its
//     lane's resequencer. An event out of attempts parks its key: its
//     events leave in order for the park, which counts against the limits
//     while it is in memory.
//  6. A turn ends when the lane is empty (it is removed), waits for a
//     timer, or has used its budget while tasks wait (in the run queue, or
//     in the worker's deque): it then goes to the back of the run queue and
//     the worker returns to its loop. The watchdog moves the rest of a
//     stuck inline batch into lanes (stuck: no progress for a tick, or for
//     contendedTicks while goroutines wait for a CPU, which is all a
//     descheduled worker's batch shows), and of a long one (shared with
//     sleeping workers; while goroutines wait for a CPU, only one that a
//     hot key holds much of), and wakes or starts a worker to steal
//     from the deque of one stuck in a handler. Nothing runs a task from
//     inside another: the stack never grows with work done.
//
// # The lock rule
//
// A shard's mutex guards its inbox, its lanes' map, every field of its
// lanes (but interrupt, an atomic hint) and the per-key counts. A worker
// owns the events it took from a lane (w.buf) and claims the events of an
// inline batch one by one with a compare-and-swap on the batch's position.
//
// Nesting, outermost first; a lock is never taken while one to its right
// is held:
//
//	shard.mu  ->  runQueue.mu  ->  Engine.wmu
//
// Only one shard's mutex is held at a time, and the run queue's is never
// taken while one is held (work becomes a task after the shard is
// unlocked). The run queue's mutex is held when it starts a worker, which
// takes the workers' list's (wmu). A Topic's mutex is held while it starts
// a subscriber's engine, and so comes before all of these. Every other
// mutex is a leaf, taken with at most those held and never holding
// another: a deque's (stealing moves lanes between two deques one lock at
// a time), a notifier's (room and quiet, signalled under a shard's lock),
// an attempt context's (its waiters), a worker's skip counter's, a rate
// limit's, the engine's own memory park store's (Withdraw calls it under a
// shard's lock), a guard store's stripe's (runtime/internal/versions and
// guard.go's; handlers call them without a lock of the engine's), the manual test clock's (timers are armed and
// stopped under a shard's lock).
//
// What runs under which lock:
//
//   - Handlers, the dead-letter sink and a park store passed in
//     Config.Parks are called without any lock.
//   - Config.OnOutcome is called under a shard's lock, except for an event
//     run inline, whose outcome the inline loop reports without a lock. It
//     may take its own locks (transport.Source does) and must not call the
//     engine.
//   - Config.Logger is called under a shard's lock for the operator's
//     events of a lane (a key parked, replayed, discarded; a resequencer's
//     bound hit), and without one otherwise.
//
// # One event, counted
//
// What one successful event touches on the default engine (New with a
// Config{}: inline dispatch, no Timeout, no OnOutcome, no MeterProvider),
// with B the number of events a worker finds in a shard's inbox at once
// (1 when events trickle in, up to the whole backlog of the shard under
// load). Counted from the code; keep it true when the code changes.
//
//	locks       1 shard lock to submit; per batch (1/B each): the run
//	            queue's to push the shard's task and to pop it, and 2 shard
//	            locks to take the inbox and to end the batch; the push
//	            wakes a worker only when no worker in a batch comes back
//	            for it (pushInbox)
//	atomics     submit: 1 load and 1 compare-and-swap to take room
//	            (takeRoom, on a cache line of its own), 2 loads for the
//	            coarse time (clock.coarse); run: 1 compare-and-swap of the
//	            batch's position, 1 load of the room's waiters, 1 load of
//	            aborted; per 64 events, 1 add to count the handled
//	            events, 1 add to give their room back and 1 load of its
//	            waiters; per batch, a few more (the run queue's length, the
//	            worker's run count, the quiet notifier's waiters)
//	queues      1 append to the shard's inbox (a 64-byte entry for a
//	            string key and a small event; its two buffers are reused:
//	            no allocation in steady state); per batch, 1 push and 1 pop
//	            of the run queue
//	timers      none (the clock's ticker runs once a millisecond while
//	            the engine has work, not per event; each tick reads the
//	            runtime's count of runnable goroutines for the watchdog)
//	allocations none
//
// An engine whose E is an interface (a generated dispatcher's) adds, per
// event, one prefetch of the box of the event 4 places ahead.
//
// Options add to that, per attempt: Config.Timeout or Config.OnOutcome an
// attempt context (attemptctx.go: 48 bytes cut from a slab the worker
// allocates once per 32 attempts, 1 atomic store to publish it and 1 to
// clear it, 1 compare-and-swap and 1 load to end it; no timer: the clock's
// tick checks the deadlines); OnOutcome, per event run inline, its own
// retirement instead of one per 64 (1 add to give its room back, 1 load of
// the room's waiters, 1 add to count it, 2 stores of the worker's
// reporting flag) and the report itself; a MeterProvider two reads of the
// clock on one attempt in 64 (every attempt of a handler slower than
// 50µs). A key with a lane adds, per take of up to
// 64 events, 2 locks of its shard and, per turn, a push and a pop of the
// run queue.
