package runtime_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// TestOperatorStress attacks ParkNow and CancelAttempt at random moments,
// with Replay, Discard, Withdraw and KeyStatus beside them, while events
// flow and handlers succeed, fail, block on their context, or block
// ignoring it (until the schedule's end), and ends each schedule with a
// Close at a random moment (whose deadline may end first) or a graceful
// drain that resolves every park. It checks on each schedule: at most one
// final outcome per accepted event (exactly one after a graceful drain);
// each key's events handled in order, each once, but for the attempts
// ParkNow took; the accounting identity; never two
// attempts of a key at once unless ParkNow took one of them (its handler
// runs on, withdrawn); every operation returns (or the hang detector dumps
// the engine); no worker left after Close.
//
//	go test -race -run TestOperatorStress ./runtime -operator.stress.for 5m
//	go test -run TestOperatorStress ./runtime -operator.stress.seed 12345
var (
	opStressFor  = flag.Duration("operator.stress.for", 3*time.Second, "how long TestOperatorStress runs schedules")
	opStressSeed = flag.Uint64("operator.stress.seed", 0, "run only the TestOperatorStress schedule with this seed")
)

func TestOperatorStress(t *testing.T) {
	if testing.Short() && *opStressSeed == 0 {
		t.Skip("stress: the full run (without -short) runs it")
	}
	if *opStressSeed != 0 {
		runOpSchedule(t, *opStressSeed)
		return
	}
	end := time.Now().Add(*opStressFor)
	seeds := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	var schedules, events, parksNow, takes int64
	for time.Now().Before(end) && !t.Failed() {
		s := runOpSchedule(t, seeds.Uint64())
		schedules++
		events += s.accepted.Load()
		parksNow += s.parksNow.Load()
		takes += s.takes.Load()
	}
	t.Logf("%d schedules, %d events accepted, %d keys parked now, %d running attempts taken", schedules, events, parksNow, takes)
}

// What an operator stress event asks its handler to do.
const (
	opOK uint8 = iota
	opFail
	opPermanent
	opBlock // until its context ends or the schedule unblocks
	opDeaf  // until the schedule's end, ignoring its context
	opKinds
)

type opEvent struct {
	Seq int
	Do  uint8
}

type opSchedule struct {
	seed    uint64
	batch   bool
	durable bool
	keys    []string
	cfg     runtime.Config[string, opEvent]
	e       *runtime.Engine[string, opEvent]
	built   chan struct{}

	unblock, release   chan struct{}
	unblockO, releaseO sync.Once

	mu      sync.Mutex
	tags    map[uint64]string // accepted tag -> key/seq
	seqOf   map[uint64]int
	keyOf   map[uint64]string
	finals  map[uint64][]runtime.Outcome
	handled map[string][]handledBy       // key -> its events' successful attempts, in order
	running map[string][]context.Context // key -> its attempts in progress
	tries   map[string]int               // key/seq -> attempts
	broken  []string

	accepted, parksNow, takes atomic.Int64
	tagSeq                    atomic.Uint64
}

func (s *opSchedule) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken = append(s.broken, fmt.Sprintf(format, args...))
}

func runOpSchedule(t *testing.T, seed uint64) *opSchedule {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
	s := &opSchedule{seed: seed, built: make(chan struct{}), unblock: make(chan struct{}), release: make(chan struct{}),
		tags: map[uint64]string{}, seqOf: map[uint64]int{}, keyOf: map[uint64]string{}, finals: map[uint64][]runtime.Outcome{},
		handled: map[string][]handledBy{}, running: map[string][]context.Context{}, tries: map[string]int{}}
	s.batch = rng.IntN(3) == 0
	s.cfg = runtime.Config[string, opEvent]{
		Name:        "opstress",
		MaxActive:   1 + rng.IntN(6),
		Backlog:     runtime.Backlog{PerKey: 100000, Total: 1000000},
		Retry:       runtime.Retry{Attempts: 1 + rng.IntN(3), Initial: 50 * time.Microsecond, Max: 300 * time.Microsecond, Multiplier: 2},
		Timeout:     time.Hour,
		OnExhausted: []runtime.ExhaustedPolicy{runtime.ParkKey, runtime.ParkKey, runtime.DropEvent}[rng.IntN(3)],
		BatchSize:   1 + rng.IntN(6),
		Logger:      discardLogger(),
		OnOutcome:   s.outcome,
	}
	if s.durable = rng.IntN(3) == 0; s.durable {
		s.cfg.Parks = runtime.NewMemoryParkStore[string, opEvent]() // outside the backlog
	}
	for k := range 1 + rng.IntN(8) {
		s.keys = append(s.keys, fmt.Sprintf("k%d", k))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(rng)
	}()
	select {
	case <-done:
	case <-time.After(hangLimit):
		state := "no engine"
		select {
		case <-s.built:
			if s.e != nil {
				state = runtime.Dump(s.e)
			}
		default:
		}
		mustHappen(t, done, fmt.Sprintf("operator schedule %d finishing; engine:\n%s", seed, state))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.broken) > 0 {
		t.Fatalf("operator schedule %d (batch %v, durable parks %v, %v when exhausted, max active %d, %d keys): %v\nreplay it with -operator.stress.seed %d",
			seed, s.batch, s.durable, s.cfg.OnExhausted, s.cfg.MaxActive, len(s.keys), s.broken[:min(len(s.broken), 5)], seed)
	}
	return s
}

func (s *opSchedule) outcome(key string, tag uint64, o runtime.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finals[tag] = append(s.finals[tag], o)
}

// handledBy is an event a handler handled, and its attempt's context: an
// attempt that ParkNow took did not count (its result was nobody's).
type handledBy struct {
	seq int
	ctx context.Context
}

// attempt runs x's behaviour for one attempt, without recording a
// success: it checks that no other attempt of key runs, unless ParkNow took
// one of them.
func (s *opSchedule) attempt(ctx context.Context, key string, x opEvent) error {
	s.mu.Lock()
	for _, other := range s.running[key] {
		// A handler that ParkNow withdrew runs on (through the rest of its
		// batch, too) beside its key's next attempts.
		if !runtime.TakenByParkNow(other) && !runtime.TakenByParkNow(ctx) {
			s.broken = append(s.broken, fmt.Sprintf("key %s: seq %d (%s) started while another of its attempts ran (its context: %v, cause %v)",
				key, x.Seq, runtime.AttemptInfo(ctx), other.Err(), context.Cause(other)))
		}
	}
	s.running[key] = append(s.running[key], ctx)
	id := fmt.Sprintf("%s/%d", key, x.Seq)
	s.tries[id]++
	try := s.tries[id]
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running[key] = slices.DeleteFunc(s.running[key], func(c context.Context) bool { return c == ctx })
		s.mu.Unlock()
	}()
	switch x.Do {
	case opFail:
		if try == 1 {
			return errors.New("transient")
		}
	case opPermanent:
		select {
		case <-s.release:
		default:
			return runtime.Permanent(errors.New("broken"))
		}
	case opBlock:
		select {
		case <-s.unblock:
		case <-ctx.Done():
			return ctx.Err()
		}
	case opDeaf:
		<-s.release
	}
	return nil
}

// record notes that the attempt of ctx handled seqs of key.
func (s *opSchedule) record(ctx context.Context, key string, seqs ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, seq := range seqs {
		s.handled[key] = append(s.handled[key], handledBy{seq, ctx})
	}
}

func (s *opSchedule) handleOne(ctx context.Context, key string, x opEvent) error {
	if err := s.attempt(ctx, key, x); err != nil {
		return err
	}
	s.record(ctx, key, x.Seq)
	return nil
}

// handleBatch handles a batch as one unit: it succeeds or fails whole.
func (s *opSchedule) handleBatch(ctx context.Context, key string, xs []opEvent) error {
	seqs := make([]int, len(xs))
	for i, x := range xs {
		if err := s.attempt(ctx, key, x); err != nil {
			return err
		}
		seqs[i] = x.Seq
	}
	s.record(ctx, key, seqs...)
	return nil
}

func (s *opSchedule) run(rng *rand.Rand) {
	var err error
	if s.batch {
		s.e, err = runtime.NewBatch(s.handleBatch, s.cfg)
	} else {
		s.e, err = runtime.New(s.handleOne, s.cfg)
	}
	close(s.built)
	if err != nil {
		s.fail("New: %v", err)
		return
	}
	stop := make(chan struct{})
	var ops, subs sync.WaitGroup
	for i := range 2 {
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))
		ops.Go(func() { s.operate(r, stop) })
	}
	nsub := 1 + rng.IntN(min(3, len(s.keys)))
	submits := 50 + rng.IntN(300)
	for i := range nsub {
		var mine []string
		for k, key := range s.keys {
			if k%nsub == i {
				mine = append(mine, key)
			}
		}
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(10+i)))
		subs.Go(func() { s.submitter(r, mine, submits/nsub) })
	}
	if rng.IntN(2) == 0 {
		// Close at a random moment, with a deadline that may end first;
		// the handlers that ignore their context return at a random moment
		// too (Close waits for them).
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // a random moment, not a synchronisation
		closed := make(chan error, 1)
		wait := time.Duration(rng.IntN(3000)) * time.Microsecond
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			closed <- s.e.Close(ctx)
		}()
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // a random moment
		s.releaseO.Do(func() { close(s.release) })
		var ce *runtime.CloseError
		if err := <-closed; err != nil && !errors.As(err, &ce) {
			s.fail("Close: %v", err)
		}
		subs.Wait()
		close(stop)
		ops.Wait()
		s.check(false)
		return
	}
	subs.Wait()
	close(stop)
	ops.Wait()
	s.drain()
	if err := s.e.Close(context.Background()); err != nil {
		s.fail("graceful Close: %v", err)
	}
	s.check(true)
}

func (s *opSchedule) submitter(rng *rand.Rand, keys []string, n int) {
	next := map[string]int{}
	for range n {
		key := keys[rng.IntN(len(keys))]
		x := opEvent{Seq: next[key]}
		switch r := rng.IntN(30); {
		case r < 3:
			x.Do = opFail
		case r < 4:
			x.Do = opPermanent
		case r < 6:
			x.Do = opBlock
		case r < 7:
			x.Do = opDeaf
		}
		tag := s.tagSeq.Add(1)
		s.mu.Lock()
		s.seqOf[tag], s.keyOf[tag] = x.Seq, key
		s.mu.Unlock()
		err := runtime.EngineForTransport(s.e).SubmitTagged(context.Background(), key, x, tag)
		switch {
		case err == nil:
			s.mu.Lock()
			s.tags[tag] = key
			s.mu.Unlock()
			s.accepted.Add(1)
			next[key]++
		case errors.Is(err, runtime.ErrClosed):
			return
		default:
			s.fail("submit: %v", err)
			return
		}
	}
}

// operate acts on random keys at random moments until stop.
func (s *opSchedule) operate(rng *rand.Rand, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		key := s.keys[rng.IntN(len(s.keys))]
		switch rng.IntN(10) {
		case 0, 1, 2:
			// A take shows as a running attempt that stops running at once.
			before := s.e.KeyStatus(key)
			// A key whose lane waits for a worker (all of them may be in
			// handlers that ignore their context) is parked by that worker:
			// ParkNow may give up waiting, and the park goes on.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(5000))*time.Microsecond)
			n, err := s.e.ParkNow(ctx, key, "stress: parked now")
			cancel()
			switch {
			case err == nil:
				s.parksNow.Add(1)
				if before.Running && before.Attempt > 0 && n > 0 {
					s.takes.Add(1)
				}
			case errors.Is(err, runtime.ErrNothingPending), errors.Is(err, runtime.ErrReplayInProgress), errors.Is(err, runtime.ErrClosed),
				errors.Is(err, context.DeadlineExceeded):
			default:
				s.fail("ParkNow: %v", err)
			}
		case 3, 4:
			err := s.e.CancelAttempt(key, errors.New("stress: cancelled"))
			if err != nil && !errors.Is(err, runtime.ErrNotRunning) {
				s.fail("CancelAttempt: %v", err)
			}
		case 5:
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
			s.expected("Replay", s.e.Replay(ctx, key))
			cancel()
		case 6:
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
			_, err := s.e.Discard(ctx, key)
			s.expected("Discard", err)
			cancel()
		case 7:
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
			r := rng.Uint64N(7)
			if _, err := runtime.EngineForTransport(s.e).Withdraw(ctx, func(tag uint64) bool { return tag%7 == r }); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				s.fail("Withdraw: %v", err)
			}
			cancel()
		case 8:
			if rng.IntN(3) == 0 {
				s.unblockO.Do(func() { close(s.unblock) })
			}
		default:
			ks := s.e.KeyStatus(key)
			if ks.Pending < 0 || (ks.Running && ks.Attempt > 0 && (ks.Started.IsZero() || ks.Batch < 1)) {
				s.fail("KeyStatus of %s: %+v", key, ks)
			}
		}
	}
}

func (s *opSchedule) expected(op string, err error) {
	for _, ok := range []error{runtime.ErrNotParked, runtime.ErrParkedAgain, runtime.ErrReplayInProgress, runtime.ErrClosed, context.DeadlineExceeded} {
		if err == nil || errors.Is(err, ok) {
			return
		}
	}
	s.fail("%s: %v", op, err)
}

// drain resolves everything after a graceful run: the handlers go on,
// faults are fixed (release), and parks are replayed or discarded until
// none is left.
func (s *opSchedule) drain() {
	s.unblockO.Do(func() { close(s.unblock) })
	s.releaseO.Do(func() { close(s.release) })
	ctx := context.Background()
	for round := 0; ; round++ {
		if err := s.e.Flush(ctx); err != nil {
			s.fail("Flush: %v", err)
			return
		}
		keys, err := s.e.ParkedKeys(ctx)
		if err != nil {
			s.fail("ParkedKeys: %v", err)
			return
		}
		if len(keys) == 0 {
			return
		}
		if round > 100 {
			s.fail("%d keys stay parked", len(keys))
			return
		}
		for i, k := range keys {
			if i%4 == 3 {
				_, err = s.e.Discard(ctx, k.Key)
			} else {
				err = s.e.Replay(ctx, k.Key)
			}
			s.expected("final replay or discard", err)
		}
	}
}

func (s *opSchedule) check(graceful bool) {
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
		s.fail("Stats.Accepted %d, the submitters saw %d", st.Accepted, s.accepted.Load())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for tag, outs := range s.finals {
		if _, ok := s.tags[tag]; !ok {
			s.broken = append(s.broken, fmt.Sprintf("tag %d reported %v but was never accepted", tag, outs))
		}
		for i, o := range outs {
			if o != runtime.Parked && i != len(outs)-1 {
				s.broken = append(s.broken, fmt.Sprintf("tag %d (%s/%d) reported %v: a final outcome before others", tag, s.keyOf[tag], s.seqOf[tag], outs))
				break
			}
		}
	}
	// Each key's events were handled in order, each once, but for the
	// attempts ParkNow took (their events parked, and ran again).
	for key, hs := range s.handled {
		var seqs []int
		for _, h := range hs {
			if !runtime.TakenByParkNow(h.ctx) {
				seqs = append(seqs, h.seq)
			}
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				s.broken = append(s.broken, fmt.Sprintf("key %s handled out of order: %v", key, seqs))
				break
			}
		}
	}
	if !graceful {
		return
	}
	if st.Pending != 0 || st.Parked != 0 {
		s.broken = append(s.broken, fmt.Sprintf("after a graceful drain: %+v", st))
	}
	for tag := range s.tags {
		outs := s.finals[tag]
		if len(outs) == 0 || outs[len(outs)-1] == runtime.Parked {
			s.broken = append(s.broken, fmt.Sprintf("accepted tag %d (%s/%d) ends with %v", tag, s.keyOf[tag], s.seqOf[tag], outs))
			return
		}
	}
}
