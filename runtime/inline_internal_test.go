package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// idleEngine returns an engine on a manual clock whose run queue starts no
// worker, so a test can drive the inline position protocol by hand.
func idleEngine(t *testing.T) *Engine[string, int] {
	t.Helper()
	cfg := Config[string, int]{clock: &manualClock{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := New(func(context.Context, string, int) error { return nil }, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.rq.max = 0 // pushes queue tasks and start nobody
	t.Cleanup(func() { e.clock.close(); e.stop() })
	return e
}

// sameShard returns n keys (prefix0, prefix1, ...) that share one shard.
func sameShard(e *Engine[string, int], n int) (*shard[string, int], []string) {
	first := "key-0"
	keys := []string{first}
	for i := 1; len(keys) < n; i++ {
		if k := fmt.Sprintf("key-%d", i); e.shardFor(k) == e.shardFor(first) {
			keys = append(keys, k)
		}
	}
	return e.shardFor(first), keys
}

func entries(keys ...string) []entry[string, int] {
	out := make([]entry[string, int], len(keys))
	for i, k := range keys {
		out[i] = entry[string, int]{key: k, it: item[int]{ev: i}}
	}
	return out
}

// The batch counts an event from the moment it is queued until the worker
// claims the next one; a spill moves the rest to lanes, gives the running
// event's key a lane its worker owns, and makes the worker's next claim
// fail.
func TestInlinePositionProtocol(t *testing.T) {
	e := idleEngine(t)
	sh, k := sameShard(e, 3)
	a, b, c := k[0], k[1], k[2]
	batch := &inlineBatch[string, int]{entries: entries(a, b, a, c)}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	batch.pos.Store(-1)
	sh.cur, sh.tasked, sh.busy = batch, true, 1
	if n := sh.unlanedCount(a); n != 2 {
		t.Fatalf("before the first claim %s counts %d, want 2", a, n)
	}
	if !batch.pos.CompareAndSwap(-1, 0) || !batch.pos.CompareAndSwap(0, 1) {
		t.Fatal("the worker's claims")
	}
	// a's first event finished when b's was claimed: it left a's count.
	if n := sh.unlanedCount(a); n != 1 {
		t.Fatalf("after claiming b, %s counts %d, want 1", a, n)
	}
	sh.inbox = entries(c) // arrived meanwhile
	ready := e.spillBatch(sh, batch, nil)
	if batch.pos.Load() != posSpilled || sh.cur != nil || sh.tasked {
		t.Fatalf("after the spill: pos %d, cur %v, queued %v", batch.pos.Load(), sh.cur, sh.tasked)
	}
	if batch.pos.CompareAndSwap(1, 2) {
		t.Fatal("the worker's next claim must fail after a spill")
	}
	lb := sh.lanes[b]
	if lb == nil || !lb.owned || lb.state != laneRunning || lb.count(true) != 1 {
		t.Fatalf("the running event's key gets a lane its worker owns: %+v", lb)
	}
	if la, lc := sh.lanes[a], sh.lanes[c]; la == nil || lc == nil || la.q.len() != 1 || lc.q.len() != 2 {
		t.Fatalf("the rest of the batch and the inbox go to lanes, in order")
	}
	if len(ready) != 2 || sh.unlanedCount(c) != 0 || len(sh.inbox) != 0 {
		t.Fatalf("ready %d lanes, %d of c left unlaned", len(ready), sh.unlanedCount(c))
	}
	if sh.busy != 3 { // b's running lane and the two queued ones; the inbox's turn ended
		t.Fatalf("busy %d, want 3", sh.busy)
	}
	// A spilled or finished batch counts nothing.
	sh.cur = batch
	if n := sh.unlanedCount(a); n != 0 {
		t.Fatalf("a spilled batch still counts %d", n)
	}
	sh.cur = nil
}

// rearm gives back the count of a timer still pending before it resets
// it: Close waits for every counted timer, so a lost count hangs it (found
// by TestStress).
func TestRearmKeepsTheTimerCount(t *testing.T) {
	e := idleEngine(t)
	var tm timer
	fired := 0
	f := func() { fired++; e.timers.Done() }
	rearm(e, &tm, 5, f)
	rearm(e, &tm, 10, f) // the first is still pending
	e.clock.manual.advance(20)
	if fired != 1 {
		t.Fatalf("fired %d times, want once", fired)
	}
	done := make(chan struct{})
	go func() { e.timers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a timer's count was lost: Close would wait for it forever")
	}
}

// Stats reads the park's gauge once: pending plus parked is then the
// backlog's load exactly, while events move into the park (found by
// TestStress: a snapshot showed more than the total).
func TestStatsNeverTornByAPark(t *testing.T) {
	e := idleEngine(t)
	const load = 50
	e.load.Store(load)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := int64(0); ; n = (n + 1) % load {
			select {
			case <-stop:
				return
			default:
				e.parked.Store(n) // events move to the park; the load stays
			}
		}
	}()
	for i := 0; i < 20000; i++ {
		if s := e.Stats(); s.Pending+s.Parked != load {
			close(stop)
			<-done
			t.Fatalf("reading %d: pending %d + parked %d != load %d", i, s.Pending, s.Parked, load)
		}
	}
	close(stop)
	<-done
}

// A lane stays in its shard for life, also when it is recycled: a timer's
// function of its earlier life reads l.shard without a lock (found by
// TestStress under -race: a lane from the engine-wide pool moved shards).
func TestRecycledLanesKeepTheirShard(t *testing.T) {
	e := idleEngine(t)
	a, b := &e.shards[0], &e.shards[1]
	a.mu.Lock()
	var ls []*lane[string, int]
	for i := 0; i < 2*maxFreeLanes; i++ {
		ls = append(ls, a.newLane(fmt.Sprint(i)))
	}
	ofA := map[*lane[string, int]]bool{}
	for _, l := range ls {
		ofA[l] = true
		a.removeLane(l) // half to the free list, half to the spare pool
	}
	a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 0; i < 2*maxFreeLanes; i++ {
		if l := b.newLane(fmt.Sprint(i)); ofA[l] || l.shard != b || l.q.pool != &b.segs {
			t.Fatalf("lane %d of shard 1 was shard 0's", i)
		}
	}
}

// Once Close gave up, a worker starts no task: the inline batch it left is
// still its shard's current one (for Close's report), so running another
// batch would reuse the buffers the watchdog may be reading (found by
// TestStress under -race).
func TestNoTaskStartsAfterAbort(t *testing.T) {
	e := idleEngine(t)
	w := &worker[string, int]{e: e}
	left := &e.shards[0]
	left.mu.Lock()
	left.cur = &w.ib // the batch the worker left when Close gave up
	w.ib.seen = 12345
	left.mu.Unlock()
	e.rq.push(task[string, int]{s: &e.shards[1]})
	e.aborted.Store(true)
	e.rq.stop(false) // the queue still holds the task
	e.workers.Add(1)
	w.loop()
	if w.ib.seen != 12345 || e.shards[1].cur != nil {
		t.Fatal("the worker ran another shard's inbox after Close gave up")
	}
}

// An attempt whose lane a withdrawal marked, or whose inline batch was
// spilled, between the moment its worker took it and its start, does not
// start (reported by the Kafka work: it began after Withdraw returned).
func TestAttemptDoesNotStartOnceWithdrawing(t *testing.T) {
	e := idleEngine(t)
	e.cfg.OnOutcome = func(string, uint64, Outcome) {} // a transport tracks the events
	w := &worker[string, int]{e: e}
	ran := false
	e.handle = func(context.Context, string, int) error { ran = true; return nil }
	var interrupt atomic.Bool
	interrupt.Store(true)
	it := item[int]{}
	if err := w.call("k", &it, notStarted{interrupt: &interrupt}, false); err != errWithdrawing || ran || it.attempts != 0 {
		t.Fatalf("marked lane: %v, ran %v, attempts %d", err, ran, it.attempts)
	}
	var pos atomic.Int64
	pos.Store(posSpilled)
	if err := w.call("k", &it, notStarted{pos: &pos, at: 3}, false); err != errWithdrawing || ran {
		t.Fatalf("spilled batch: %v, ran %v", err, ran)
	}
	pos.Store(3)
	if err := w.call("k", &it, notStarted{pos: &pos, at: 3}, false); err != nil || !ran || it.attempts != 1 {
		t.Fatalf("an event still its worker's runs: %v, ran %v", err, ran)
	}
}

// An inline event's outcome is reported once its worker claimed the next
// event of the batch. Withdraw must not return in between: a transport
// ending an ownership would settle that event's message as unfinished, and
// its next owner would apply it again (found by the Kafka rebalance storm:
// a key's events applied by two members).
func TestWithdrawWaitsForAnUnreportedOutcome(t *testing.T) {
	inReport, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{})
	var waitOnce sync.Once
	var reported atomic.Bool
	cfg := Config[string, int]{
		clock:  &manualClock{}, // no watchdog tick spills the batch
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnOutcome: func(_ string, tag uint64, o Outcome) {
			if tag == 1 && o == Handled {
				close(inReport)
				<-release
				reported.Store(true)
			}
		},
		onReportWait: func() { waitOnce.Do(func() { close(waiting) }) },
	}
	gate := make(chan struct{})
	e, err := New(func(_ context.Context, _ string, v int) error {
		if v == 0 {
			<-gate // hold the first event until both are in one inbox
		}
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close(context.Background()) }()
	ctx := context.Background()
	// The worker handles key 1's event (tag 1) and holds its outcome back
	// until it claims key 2's (tag 2), and reports it then.
	oneBatchBehind(t, e, gate)
	<-inReport // the worker reports tag 1, after it claimed tag 2
	withdrawn := make(chan bool, 1)
	go func() {
		_, err := e.withdraw(ctx, func(tag uint64) bool { return tag == 1 })
		if err != nil {
			t.Error(err)
		}
		withdrawn <- reported.Load()
	}()
	select {
	case <-waiting:
	case was := <-withdrawn:
		close(release)
		t.Fatalf("Withdraw returned while tag 1's outcome was unreported (reported %v)", was)
	}
	close(release)
	if !<-withdrawn {
		t.Fatal("Withdraw returned before tag 1's outcome was reported")
	}
}

// A spill that reads the batch's position just before the worker claims
// its next event spills from that event on. It used to give up when its
// claim lost to the worker's: the batch stayed the worker's, and a
// Withdraw that found nothing else let the claimed event run after it
// returned (found by TestStreamIntakeStress: an event of an ended stream
// started, with a live context, after End returned).
func TestSpillAfterTheWorkersNextClaim(t *testing.T) {
	release1 := make(chan struct{})
	started1 := make(chan struct{})
	reporting, unreport := make(chan struct{}), make(chan struct{})
	var ran2 atomic.Bool
	var lookOnce, unreportOnce sync.Once
	cfg := Config[string, int]{
		clock:  &manualClock{}, // no watchdog tick spills the batch
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnOutcome: func(_ string, tag uint64, o Outcome) {
			if tag == 1 && o == Handled {
				close(reporting) // tag 2 is claimed, not started
				<-unreport
			}
		},
		// The worker claims tag 2 between the spill's look and its claim.
		onSpillLook: func() {
			lookOnce.Do(func() {
				close(release1)
				<-reporting
			})
		},
		onReportWait: func() { unreportOnce.Do(func() { close(unreport) }) },
	}
	gate := make(chan struct{})
	e, err := New(func(_ context.Context, _ string, v int) error {
		switch v {
		case 0:
			<-gate // hold the worker until tags 1 and 2 are in one inbox
		case 1:
			close(started1)
			<-release1
		case 2:
			ran2.Store(true)
		}
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	oneBatchBehind(t, e, gate)
	<-started1
	n, err := e.withdraw(ctx, func(tag uint64) bool { return tag == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ran2.Load() || n != 1 {
		t.Fatalf("tag 2, claimed as the spill looked: withdrawn %d, ran %v; want withdrawn 1, not run", n, ran2.Load())
	}
}

// oneBatchBehind submits events 0, 1 and 2, tagged so, of three keys of
// one shard, then closes gate: e's handler holds event 0 until then, so
// that its worker takes events 1 and 2 in one inline batch.
func oneBatchBehind(t *testing.T, e *Engine[string, int], gate chan struct{}) {
	t.Helper()
	_, keys := sameShard(e, 3)
	for i, k := range keys {
		if err := e.submitTagged(context.Background(), k, i, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
}

// hotKeyIn finds a key that holds much of a batch's remainder, and none in a
// batch of distinct keys or of moved events.
func TestHotKeyIn(t *testing.T) {
	b := &inlineBatch[string, int]{}
	for i := range 1000 {
		b.entries = append(b.entries, entry[string, int]{key: "k" + strconv.Itoa(i)})
	}
	if hotKeyIn(b, 0) {
		t.Fatal("a hot key among distinct keys")
	}
	for i := 0; i < len(b.entries); i += 2 {
		b.entries[i].key = "hot"
	}
	if !hotKeyIn(b, 0) {
		t.Fatal("a key with half of the events not found")
	}
	if hotKeyIn(b, int64(len(b.entries)-hotSamples+1)) {
		t.Fatal("a remainder shorter than the samples looked at")
	}
	for i := range b.entries {
		if b.entries[i].key == "hot" {
			b.entries[i].it.moved = true
		}
	}
	if hotKeyIn(b, 0) {
		t.Fatal("moved events counted")
	}
}

// A worker whose batch was spilled at an event it did not run (a's event
// had moved into a's lane) must not take a lane of that key as its own: a's
// lane may have ended since, and a may have a new lane that a spill made
// for another worker, which runs a's next event inline. Looking the lane up
// by key, the first worker ran a's later events beside it (found by
// TestStress: "key ran twice at once").
func TestSpilledWorkerTakesOnlyTheLaneMadeForIt(t *testing.T) {
	e := idleEngine(t)
	sh, k := sameShard(e, 2)
	a, b := k[0], k[1]
	w1 := &worker[string, int]{e: e}

	// The first worker's batch: a's first event failed and moved, with a's
	// second, into a's lane; the worker skipped the second (pos 1) when the
	// watchdog spilled the batch.
	b1 := &inlineBatch[string, int]{entries: entries(a, a, b)}
	sh.mu.Lock()
	b1.pos.Store(1)
	sh.cur, sh.tasked, sh.busy = b1, true, 1
	la := sh.newLane(a)
	la.state, sh.busy = laneRunning, sh.busy+1
	la.q.pushBack(b1.entries[1].it)
	b1.entries[0].it.moved, b1.entries[1].it.moved = true, true
	e.spillBatch(sh, b1, nil)
	// a's lane runs its events elsewhere, empties and leaves the map.
	la.q.release()
	la.state = laneIdle
	e.idle(sh)
	sh.removeLane(la)

	// A second worker's batch runs a's next event inline; it blocks, and
	// the watchdog spills that batch: a gets a lane the second worker owns.
	b2 := &inlineBatch[string, int]{entries: entries(a, a)}
	b2.pos.Store(0)
	sh.cur, sh.tasked, sh.busy = b2, true, sh.busy+1
	e.spillBatch(sh, b2, nil)
	owned := sh.lanes[a]
	if owned == nil || !owned.owned || owned.state != laneRunning || owned.q.len() != 1 {
		sh.mu.Unlock()
		t.Fatalf("the second worker's lane for a: %+v", owned)
	}
	sh.mu.Unlock()

	// The first worker finds its batch spilled.
	var run inlineRun[string, int]
	if l := w1.spilledAfter(sh, b1, &run); l != nil {
		t.Fatalf("the first worker took a's lane (%p), which the second owns (%p)", l, owned)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !owned.owned || owned.inflight != 1 {
		t.Fatalf("a's lane is no longer the second worker's: inline %v, inflight %d", owned.owned, owned.inflight)
	}
}
