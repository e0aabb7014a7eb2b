package runtime_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

// TestStress runs random schedules against random engines for a bounded
// time (-stress.for; CI runs the default) and checks the runtime's contract
// on each: per-key order, never two events of a key at once, exactly one
// final outcome per accepted event, no event started after a Withdraw
// that selected it returned, the accounting identity, the backlog
// bounds, no false per-key rejection, no lost wake-up (everything that must
// return does, or the hang detector dumps every goroutine), and no worker
// left after Close (goleak checks the rest at the end).
//
// Each schedule draws an engine kind (inline, conflating, batch: its
// handler failing or deciding each event with Verdicts, its batches
// lingering or not), a backlog policy, an exhaustion policy, a park store
// (in memory or outside the backlog) and a Resync that fails at random or
// none, and mixes successes, transient and permanent errors, panics,
// timeouts, handlers that block, skips and holds, submits whose context
// ends, concurrent Replay, Discard, Withdraw, Flush and introspection, and
// either a Close at a random moment (with a deadline that may end first) or
// a graceful drain that resolves every park.
//
//	go test -race -run TestStress ./runtime -stress.for 30m
//	go test -run TestStress ./runtime -stress.seed 12345   # replay one schedule
var (
	stressFor  = flag.Duration("stress.for", 8*time.Second, "how long TestStress runs schedules")
	stressSeed = flag.Uint64("stress.seed", 0, "run only the schedule with this seed")
)

func TestStress(t *testing.T) {
	if testing.Short() && *stressSeed == 0 {
		t.Skip("stress: the full run (without -short) runs it")
	}
	if *stressSeed != 0 {
		st := runSchedule(t, *stressSeed)
		t.Logf("schedule %d: %d events accepted", *stressSeed, st.accepted.Load())
		return
	}
	end := time.Now().Add(*stressFor)
	seeds := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var schedules, events int64
	for time.Now().Before(end) && !t.Failed() {
		seed := seeds.Uint64()
		st := runSchedule(t, seed)
		schedules++
		events += st.accepted.Load()
	}
	t.Logf("%d schedules, %d events accepted", schedules, events)
}

// What a stress event asks its handler to do.
const (
	doOK uint8 = iota
	doFail
	doPermanent
	doPanic
	doTimeout
	doBlock
	doSkip
	doHold
	doSlow
	doKinds
)

// sev is a stress event: its key's sequence number and a behaviour.
type sev struct {
	Seq int
	Do  uint8
	N   int    // failures for doFail
	Tag uint64 // the tag it was submitted with
}

// schedule is one random run.
type schedule struct {
	t        *testing.T
	seed     uint64
	cfg      runtime.Config[string, sev]
	kind     string // "inline", "conflate", "batch"
	durable  bool   // parks outside the backlog
	keys     []string
	submits  int
	graceful bool
	// verdicts: the batch handler decides each event (genimpl.Verdicts),
	// and sometimes leaves the rest for the next batch.
	verdicts bool

	e     *runtime.Engine[string, sev]
	built chan struct{} // closed once e is set

	mu       sync.Mutex
	attempts map[string]int    // key/seq -> attempts
	handled  map[string][]int  // key -> seqs handled, in order
	heldSeqs map[string]bool   // key/seq of events that asked to be held
	running  map[string]string // key -> what runs ("" when nothing does)
	overlap  []string          // keys seen running twice
	fixed    map[string]bool   // permanent failures fixed
	final    map[uint64]int    // tag -> final outcomes reported
	finalKey map[string]int    // key -> final outcomes reported
	accTags  map[uint64]bool   // tags accepted
	accKey   map[string]int    // key -> events accepted
	unblock  chan struct{}     // blocked handlers wait for it
	unblockO sync.Once         // closes unblock
	errs     chan error        // failures seen by goroutines
	accepted atomic.Int64      // events accepted
	tagSeq   atomic.Uint64     // the next tag
	parkSeen map[uint64]bool   // tags reported Parked (not final)
	lastErr  map[string]error  // each key's last refusal
	// clock orders acceptances, withdrawals and starts (a logical clock):
	// accAt is each accepted tag's time, taken after Submit returned, and
	// withdrawals are the Withdraw calls that returned nil.
	clock       atomic.Uint64
	accAt       map[uint64]uint64
	withdrawals []stressWithdrawal
}

// stressWithdrawal is a Withdraw of the tags that are r modulo 5 that
// returned nil: it began and ended at these times of schedule.clock.
type stressWithdrawal struct{ r, began, ended uint64 }

// runSchedule draws and runs one schedule, failing t on a broken guarantee.
func runSchedule(t *testing.T, seed uint64) *schedule {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := &schedule{t: t, seed: seed,
		attempts: map[string]int{}, handled: map[string][]int{}, heldSeqs: map[string]bool{},
		running: map[string]string{}, fixed: map[string]bool{}, final: map[uint64]int{},
		finalKey: map[string]int{}, accTags: map[uint64]bool{}, accKey: map[string]int{},
		unblock: make(chan struct{}), errs: make(chan error, 100), built: make(chan struct{}),
		parkSeen: map[uint64]bool{}, lastErr: map[string]error{}, accAt: map[uint64]uint64{}}
	s.draw(rng)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(rng)
	}()
	select {
	case <-done:
	case <-time.After(hangLimit):
		state := "no engine"
		if e := s.engine(); e != nil {
			state = runtime.Dump(e)
		}
		mustHappen(t, done, fmt.Sprintf("schedule %d (%s) finishing; engine:\n%s", seed, s.describe(), state))
	}
	select {
	case err := <-s.errs:
		t.Fatalf("schedule %d (%s): %v\nreplay it with -stress.seed %d", seed, s.describe(), err, seed)
	default:
	}
	return s
}

// engine returns the schedule's engine once it is built.
func (s *schedule) engine() *runtime.Engine[string, sev] {
	select {
	case <-s.built:
		return s.e
	default:
		return nil
	}
}

func (s *schedule) describe() string {
	return fmt.Sprintf("%s engine (verdicts %v, linger %v), %v when full, %v when exhausted, durable parks %v, resync %v, max active %d, per key %d, total %d, %d keys, graceful %v",
		s.kind, s.verdicts, s.cfg.Linger, s.cfg.Backlog.WhenFull, s.cfg.OnExhausted, s.durable, s.cfg.Resync != nil, s.cfg.MaxActive, s.cfg.Backlog.PerKey, s.cfg.Backlog.Total, len(s.keys), s.graceful)
}

// fail records a broken guarantee; the schedule's goroutines go on.
func (s *schedule) fail(format string, args ...any) {
	select {
	case s.errs <- fmt.Errorf(format, args...):
	default:
	}
}

func (s *schedule) draw(rng *rand.Rand) {
	policies := []runtime.FullPolicy{runtime.Reject, runtime.Block, runtime.DropOldest, runtime.DropNewest, runtime.BlockThenReject}
	exhausted := []runtime.ExhaustedPolicy{runtime.ParkKey, runtime.ParkKey, runtime.SendToDeadLetter, runtime.DropEvent}
	s.kind = []string{"inline", "inline", "conflate", "batch"}[rng.IntN(4)]
	perKey := 1 + rng.IntN(20)
	s.cfg = runtime.Config[string, sev]{
		Name:        "stress",
		MaxActive:   1 + rng.IntN(6),
		Backlog:     runtime.Backlog{PerKey: perKey, Total: perKey * (1 + rng.IntN(5)), WhenFull: policies[rng.IntN(len(policies))]},
		Retry:       runtime.Retry{Attempts: 1 + rng.IntN(3), Initial: 50 * time.Microsecond, Max: 500 * time.Microsecond, Multiplier: 2},
		OnExhausted: exhausted[rng.IntN(len(exhausted))],
		BatchSize:   1 + rng.IntN(8),
		MaxHeld:     1 + rng.IntN(3),
		MaxHold:     time.Duration(1+rng.IntN(3)) * time.Millisecond,
		Logger:      discardLogger(),
		OnOutcome:   s.outcome,
	}
	if rng.IntN(3) == 0 {
		s.cfg.Timeout = time.Duration(200+rng.IntN(800)) * time.Microsecond
	}
	if s.cfg.Backlog.WhenFull == runtime.BlockThenReject {
		s.cfg.Backlog.Wait = time.Duration(50+rng.IntN(2000)) * time.Microsecond
	}
	if s.cfg.OnExhausted == runtime.SendToDeadLetter {
		s.cfg.DeadLetter = func(context.Context, runtime.DeadLetterEvent[string, sev]) error {
			if rng := rand.Uint32(); rng%8 == 0 {
				return errors.New("dead-letter sink down") // the event parks instead
			}
			return nil
		}
	}
	if s.durable = rng.IntN(3) == 0; s.durable {
		s.cfg.Parks = runtime.NewMemoryParkStore[string, sev]() // a store of its own: outside the backlog
	}
	s.cfg.Conflate = s.kind == "conflate"
	if s.kind == "batch" {
		s.verdicts = rng.IntN(2) == 0
		if rng.IntN(2) == 0 {
			s.cfg.Linger = time.Duration(rng.IntN(1000)) * time.Microsecond
		}
	}
	if rng.IntN(2) == 0 {
		s.cfg.Resync = s.resync
	}
	for k := 0; k < 1+rng.IntN(8); k++ {
		s.keys = append(s.keys, fmt.Sprintf("k%d", k))
	}
	s.submits = 50 + rng.IntN(400)
	s.graceful = rng.IntN(2) == 0
}

// outcome is the engine's OnOutcome: it counts final outcomes per tag.
func (s *schedule) outcome(key string, tag uint64, o runtime.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o == runtime.Parked {
		s.parkSeen[tag] = true
		return
	}
	s.final[tag]++
	s.finalKey[key]++
	if s.final[tag] > 1 {
		s.overlap = append(s.overlap, fmt.Sprintf("tag %d: %d final outcomes (last %v)", tag, s.final[tag], o))
	}
}

// behave runs x's behaviour for one attempt, without recording a success.
func (s *schedule) behave(ctx context.Context, key string, x sev) error {
	id := key + "/" + strconv.Itoa(x.Seq)
	s.mu.Lock()
	s.attempts[id]++
	attempt := s.attempts[id]
	fixed := s.fixed[key]
	s.mu.Unlock()
	switch x.Do {
	case doFail:
		if attempt <= x.N {
			return fmt.Errorf("transient failure %d of %s", attempt, id)
		}
	case doPermanent:
		if !fixed {
			return runtime.Permanent(fmt.Errorf("cannot apply %s", id))
		}
	case doPanic:
		if attempt == 1 {
			panic("boom " + id)
		}
	case doTimeout:
		if attempt == 1 && s.cfg.Timeout > 0 {
			<-ctx.Done() // honours the attempt's deadline
			return ctx.Err()
		}
	case doBlock:
		select {
		case <-s.unblock:
		case <-ctx.Done():
			return ctx.Err()
		}
	case doSkip:
		return runtime.Skip("stress skip")
	case doHold:
		if attempt == 1 {
			return runtime.Hold("stress hold")
		}
	case doSlow:
		time.Sleep(time.Duration(attempt) * 20 * time.Microsecond) // simulated work
	}
	return nil
}

// notWithdrawn records a violation when an attempt of x starts after a
// Withdraw that selected it returned nil, x having been accepted before
// that Withdraw began: Withdraw takes every selected event that has not
// started, and waits for those that have. (A parked event may come back
// from a store, which need not keep its tag: those are left out. So is an
// attempt whose context ended: a withdrawal whose own context ended
// cancels its attempts, and those are not counted.)
func (s *schedule) notWithdrawn(ctx context.Context, key string, x sev) {
	started := s.clock.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	acc, ok := s.accAt[x.Tag]
	if !ok || s.parkSeen[x.Tag] || ctx.Err() != nil {
		return
	}
	for _, w := range s.withdrawals {
		if x.Tag%5 == w.r && acc < w.began && w.ended < started {
			s.overlap = append(s.overlap, fmt.Sprintf("key %s: seq %d (tag %d) started after a Withdraw that selected it returned", key, x.Seq, x.Tag))
			return
		}
	}
}

// enter records that a handler of key starts with what (its events and
// attempts), and an overlap when one of key already runs.
func (s *schedule) enter(key, what string) {
	s.mu.Lock()
	if was := s.running[key]; was != "" {
		s.overlap = append(s.overlap, "key "+key+" ran twice at once: "+what+" started while "+was+" ran")
	}
	s.running[key] = what
	s.mu.Unlock()
}

func (s *schedule) leave(key string) {
	s.mu.Lock()
	s.running[key] = ""
	s.mu.Unlock()
}

// attemptOf describes an attempt of x for the overlap message.
func (s *schedule) attemptOf(key string, x sev) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("seq %d (do %d, attempt %d)", x.Seq, x.Do, s.attempts[key+"/"+strconv.Itoa(x.Seq)]+1)
}

func (s *schedule) record(key string, seqs ...int) {
	s.mu.Lock()
	s.handled[key] = append(s.handled[key], seqs...)
	s.mu.Unlock()
}

func (s *schedule) handle(ctx context.Context, key string, x sev) error {
	s.notWithdrawn(ctx, key, x)
	s.enter(key, s.attemptOf(key, x))
	defer s.leave(key)
	if err := s.behave(ctx, key, x); err != nil {
		return err
	}
	s.record(key, x.Seq)
	return nil
}

func (s *schedule) handleBatch(ctx context.Context, key string, xs []sev) error {
	for _, x := range xs {
		s.notWithdrawn(ctx, key, x)
	}
	s.enter(key, fmt.Sprintf("batch of %d from %s", len(xs), s.attemptOf(key, xs[0])))
	defer s.leave(key)
	if s.verdicts {
		return s.decideBatch(ctx, key, xs)
	}
	for _, x := range xs {
		if err := s.behave(ctx, key, x); err != nil {
			return err
		}
	}
	seqs := make([]int, len(xs))
	for i, x := range xs {
		seqs[i] = x.Seq
	}
	s.record(key, seqs...)
	return nil
}

// decideBatch is a batch handler that decides each event, as a generated
// batch guard does: a skip or a hold is its event's verdict, any other
// failure fails the batch, and now and then the batch ends early, the rest
// left for the next one.
func (s *schedule) decideBatch(ctx context.Context, key string, xs []sev) error {
	n := len(xs)
	if n > 1 && rand.IntN(4) == 0 {
		n = 1 + rand.IntN(n-1)
	}
	verdicts := make([]error, n)
	var seqs []int
	for i, x := range xs[:n] {
		err := s.behave(ctx, key, x)
		_, skip := runtime.IsSkip(err)
		_, hold := runtime.IsHold(err)
		switch {
		case err == nil:
			seqs = append(seqs, x.Seq)
		case skip || hold:
			verdicts[i] = err
		default:
			return err
		}
	}
	s.record(key, seqs...)
	return genimpl.Verdicts(verdicts)
}

// resync is the engine's Resync: it fails at random (a failure, a
// permanent one, a panic) and otherwise covers some of the held events.
// It must never run beside a handler of its key.
func (s *schedule) resync(_ context.Context, key string, held []sev) (int, error) {
	s.enter(key, fmt.Sprintf("resync of %d held", len(held)))
	defer s.leave(key)
	if len(held) == 0 {
		s.fail("resync of %s with no held event", key)
	}
	switch rand.IntN(6) {
	case 0:
		return 0, errors.New("source of truth down")
	case 1:
		return 0, runtime.Permanent(errors.New("no such key at the source"))
	case 2:
		panic("resync boom")
	}
	return rand.IntN(len(held) + 1), nil
}

// run builds the engine and drives the schedule.
func (s *schedule) run(rng *rand.Rand) {
	var err error
	if s.kind == "batch" {
		s.e, err = runtime.NewBatch(s.handleBatch, s.cfg)
	} else {
		s.e, err = runtime.New(s.handle, s.cfg)
	}
	close(s.built)
	if err != nil {
		s.fail("New: %v", err)
		return
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var ops sync.WaitGroup
	opRng := rand.New(rand.NewPCG(rng.Uint64(), 2))
	ops.Go(func() { s.operate(opRng, stop) })
	// Submitters own disjoint keys, so each key's order is one goroutine's.
	nsub := 1 + rng.IntN(min(3, len(s.keys)))
	var subs sync.WaitGroup
	for i := 0; i < nsub; i++ {
		var mine []string
		for k, key := range s.keys {
			if k%nsub == i {
				mine = append(mine, key)
			}
		}
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))
		subs.Go(func() { s.submitter(r, mine, s.submits/nsub) })
	}
	closeAt := rng.IntN(4) // abrupt schedules close while submitters run
	if !s.graceful {
		for i := 0; i < closeAt; i++ {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // a random moment, not a synchronisation
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
		if rng.IntN(3) == 0 {
			s.unblockO.Do(func() { close(s.unblock) })
		}
		err := s.e.Close(cctx)
		cancel()
		var ce *runtime.CloseError
		if err != nil && !errors.As(err, &ce) {
			s.fail("Close: %v", err)
		}
		subs.Wait()
		close(stop)
		ops.Wait()
		s.unblockO.Do(func() { close(s.unblock) })
		s.checkEnd(false)
		return
	}
	subs.Wait()
	close(stop)
	ops.Wait()
	s.drain(ctx, rng)
	if err := s.e.Close(ctx); err != nil {
		s.fail("graceful Close: %v", err)
	}
	s.checkEnd(true)
}

// submitter submits n events to its keys, with random behaviours and some
// contexts that end.
func (s *schedule) submitter(rng *rand.Rand, keys []string, n int) {
	next := map[string]int{}
	for i := 0; i < n; i++ {
		key := keys[rng.IntN(len(keys))]
		x := sev{Seq: next[key]}
		switch r := rng.IntN(40); {
		case r < 3:
			x.Do, x.N = doFail, 1+rng.IntN(3)
		case r < 4:
			x.Do = doPermanent
		case r < 5:
			x.Do = doPanic
		case r < 6:
			x.Do = doTimeout
		case r < 7:
			x.Do = doBlock
		case r < 9:
			x.Do = doSkip
		case r < 10:
			x.Do = doHold
		case r < 14:
			x.Do = doSlow
		}
		ctx := context.Background()
		var cancel context.CancelFunc = func() {}
		switch rng.IntN(8) {
		case 0:
			ctx, cancel = context.WithCancel(ctx)
			cancel() // already ended: only a wait notices
		case 1:
			ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(500))*time.Microsecond)
		}
		if !s.submit(ctx, key, x) {
			cancel()
			if s.closedFor(key) {
				return
			}
			continue
		}
		cancel()
		next[key]++
	}
}

// closedFor reports whether key's last refusal said the engine closed.
func (s *schedule) closedFor(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Is(s.lastErr[key], runtime.ErrClosed)
}

// submit submits x and reports whether it was accepted; a refusal is
// checked against the key's count.
func (s *schedule) submit(ctx context.Context, key string, x sev) bool {
	tag := s.tagSeq.Add(1)
	x.Tag = tag
	s.mu.Lock()
	before := s.accKey[key] - s.finalKey[key]
	s.mu.Unlock()
	err := runtime.EngineForTransport(s.e).SubmitTagged(ctx, key, x, tag)
	if err == nil {
		at := s.clock.Add(1)
		s.mu.Lock()
		s.accTags[tag] = true
		s.accAt[tag] = at
		s.accKey[key]++
		if x.Do == doHold {
			s.heldSeqs[key+"/"+strconv.Itoa(x.Seq)] = true
		}
		s.mu.Unlock()
		s.accepted.Add(1)
		return true
	}
	s.mu.Lock()
	s.lastErr[key] = err
	s.mu.Unlock()
	switch {
	case errors.Is(err, runtime.ErrClosed):
	case errors.Is(err, runtime.ErrBacklogFull):
		msg := err.Error()
		perKey := strings.Contains(msg, "per-key limit") || strings.Contains(msg, "is parked with")
		// Parks outside the backlog leave it and come back for a replay
		// without a report: the count is only known in memory.
		if perKey && !s.durable && before < s.cfg.Backlog.PerKey {
			s.fail("false per-key refusal of %s: %v (at most %d events without an outcome, per key %d)", key, err, before, s.cfg.Backlog.PerKey)
		}
	default:
		s.fail("submit %s: unexpected error %v", key, err)
	}
	return false
}

// operate calls the operator's methods at random moments until stop.
func (s *schedule) operate(rng *rand.Rand, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		key := s.keys[rng.IntN(len(s.keys))]
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
		switch rng.IntN(12) {
		case 0:
			s.mu.Lock()
			s.fixed[key] = true
			s.mu.Unlock()
			s.okOrExpected("Replay", s.e.Replay(ctx, key))
		case 1:
			_, err := s.e.Discard(ctx, key)
			s.okOrExpected("Discard", err)
		case 2:
			r := rng.Uint64N(5)
			began := s.clock.Add(1)
			_, err := runtime.EngineForTransport(s.e).Withdraw(ctx, func(tag uint64) bool { return tag%5 == r })
			if err == nil {
				ended := s.clock.Add(1)
				s.mu.Lock()
				s.withdrawals = append(s.withdrawals, stressWithdrawal{r, began, ended})
				s.mu.Unlock()
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				s.fail("Withdraw: %v", err)
			}
		case 3:
			if err := s.e.Flush(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				s.fail("Flush: %v", err)
			}
		case 4:
			if rng.IntN(4) == 0 {
				s.unblockO.Do(func() { close(s.unblock) })
			}
		default:
			s.checkBounds()
			_ = s.e.TopBacklog(3)
			_ = s.e.Health(time.Hour)
		}
		cancel()
	}
}

func (s *schedule) okOrExpected(op string, err error) {
	for _, ok := range []error{runtime.ErrNotParked, runtime.ErrParkedAgain, runtime.ErrReplayInProgress, runtime.ErrClosed, context.DeadlineExceeded} {
		if err == nil || errors.Is(err, ok) {
			return
		}
	}
	s.fail("%s: %v", op, err)
}

// checkBounds checks the backlog limits on a live engine.
func (s *schedule) checkBounds() {
	st := s.e.Stats()
	held := st.Pending
	if !s.durable {
		held += st.Parked
	}
	if held > int64(s.cfg.Backlog.Total) {
		s.fail("backlog %d (pending %d, parked %d) above the total %d", held, st.Pending, st.Parked, s.cfg.Backlog.Total)
	}
	for _, kb := range s.e.TopBacklog(len(s.keys)) {
		if kb.Pending > s.cfg.Backlog.PerKey {
			s.fail("key %s has %d pending, per key %d", kb.Key, kb.Pending, s.cfg.Backlog.PerKey)
		}
	}
}

// drain resolves everything after a graceful run: blocked handlers go on,
// faults are fixed, held events are offered again (one more event per key
// re-offers them), parks are replayed, until nothing is left.
func (s *schedule) drain(ctx context.Context, rng *rand.Rand) {
	s.unblockO.Do(func() { close(s.unblock) })
	s.mu.Lock()
	for _, key := range s.keys {
		s.fixed[key] = true
	}
	s.mu.Unlock()
	for round := 0; ; round++ {
		if err := s.e.Flush(ctx); err != nil {
			s.fail("Flush: %v", err)
			return
		}
		st := s.e.Stats()
		keys, err := s.e.ParkedKeys(ctx)
		if err != nil {
			s.fail("ParkedKeys: %v", err)
			return
		}
		if st.Held == 0 && len(keys) == 0 {
			return
		}
		if round > 1000 {
			s.fail("nothing resolves the last %d held and %d parked keys", st.Held, len(keys))
			return
		}
		for _, k := range keys {
			if rng.IntN(4) == 0 {
				_, err = s.e.Discard(ctx, k.Key)
			} else {
				err = s.e.Replay(ctx, k.Key)
			}
			s.okOrExpected("final replay or discard", err)
		}
		if st.Held > 0 {
			// A held event goes on after a later event of its key, or when
			// it waited MaxHold (its key then parks, and the next round
			// replays it): give it both.
			time.Sleep(s.cfg.MaxHold) // the policy's time, not a synchronisation
			for _, key := range s.keys {
				s.mu.Lock()
				seq := s.accKey[key] + 1_000_000 // after every submitter's
				s.mu.Unlock()
				s.submit(ctx, key, sev{Seq: seq}) // refused while parked: the next round replays

			}
		}
	}
}

// checkEnd checks the guarantees once the engine is closed.
func (s *schedule) checkEnd(graceful bool) {
	if n := runtime.LiveWorkers(s.e); n != 0 {
		s.fail("%d workers still run after Close", n)
	}
	st := s.e.Stats()
	in := st.Accepted + st.Restored
	out := st.Handled + st.Skipped + uint64(st.Parked) + st.DeadLettered + st.Dropped + st.Discarded + st.Conflated + st.Withdrawn + uint64(st.Pending)
	if in != out {
		s.fail("accounting: %+v", st)
	}
	if int64(st.Accepted) != s.accepted.Load() {
		s.fail("Stats.Accepted %d, the submitters saw %d accepted", st.Accepted, s.accepted.Load())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.overlap) > 0 {
		s.fail("%v", s.overlap)
	}
	for key, seqs := range s.handled {
		last := -1
		for _, seq := range seqs {
			if s.heldSeqs[key+"/"+strconv.Itoa(seq)] {
				continue // a held event runs after later ones by design
			}
			if seq <= last {
				s.fail("key %s handled out of order: %v", key, seqs)
				break
			}
			last = seq
		}
	}
	for tag := range s.final {
		if !s.accTags[tag] {
			s.fail("tag %d reported an outcome but was never accepted", tag)
		}
	}
	if !graceful {
		return
	}
	if st.Pending != 0 || st.Parked != 0 || st.Held != 0 {
		s.fail("after a graceful drain: %+v", st)
	}
	for tag := range s.accTags {
		if s.final[tag] != 1 {
			s.fail("accepted tag %d has %d final outcomes", tag, s.final[tag])
			return
		}
	}
}
