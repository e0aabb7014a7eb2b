package transport_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// streamRig is a StreamIntake over an engine whose handler the test holds,
// recording what it settles and dead-letters, by message id.
type streamRig struct {
	in     *transport.StreamIntake[string, ev, string]
	engine *runtime.Engine[string, ev]

	mu       sync.Mutex
	settled  map[string]transport.Settlement
	dead     []string
	handled  []ev
	changed  chan struct{} // a settlement, a dead letter or a handled event
	dlAnswer func(id string, done func(error))
	admit    func(id string) transport.Admission
	logged   chan string // the messages the intake logs
}

// logTo is a slog handler that passes each message to ch, or drops it when
// nobody reads.
type logTo chan string

func (h logTo) Enabled(context.Context, slog.Level) bool { return true }
func (h logTo) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h logTo) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logTo) WithGroup(string) slog.Handler      { return h }

func newStreamRig(t *testing.T, handler runtime.Handler[string, ev], cfg runtime.Config[string, ev]) *streamRig {
	t.Helper()
	r := &streamRig{settled: map[string]transport.Settlement{}, changed: make(chan struct{}, 1), logged: make(chan string, 16)}
	in, err := transport.NewStreamIntake[string](transport.StreamConfig[ev, string]{
		System: "test",
		Settle: func(id string, st transport.Settlement) { r.note(func() { r.settled[id] = st }) },
		DeadLetter: func(m transport.Message[ev, string], done func(error)) {
			if r.dlAnswer != nil {
				r.dlAnswer(m.Handle, done)
				return
			}
			r.note(func() { r.dead = append(r.dead, m.Handle) })
			done(nil)
		},
		Admit: func(id string) transport.Admission {
			if r.admit != nil {
				return r.admit(id)
			}
			return transport.AdmitTake
		},
		Logger: slog.New(logTo(r.logged)),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.in = in
	cfg.OnOutcome = in.OnOutcome
	cfg.Logger = slog.New(slog.DiscardHandler)
	e, err := runtime.New(func(ctx context.Context, k string, v ev) error {
		err := handler(ctx, k, v)
		if err == nil {
			r.note(func() { r.handled = append(r.handled, v) })
		}
		return err
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.engine = e
	if err := in.Start(validating{transport.EngineTarget(e)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return r
}

// validating refuses an event without a key as invalid, as a generated
// dispatcher does.
type validating struct{ transport.Target[ev] }

func (v validating) SubmitTagged(ctx context.Context, e ev, tag uint64, from int) (int, error) {
	if e.Key == "" {
		return 0, fmt.Errorf("%w: no key", runtime.ErrInvalidEvent)
	}
	return v.Target.SubmitTagged(ctx, e, tag, from)
}

func (r *streamRig) note(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// await waits until cond holds (looked at after each change), or fails.
func (r *streamRig) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func msgs(key string, ids ...string) []transport.Message[ev, string] {
	out := make([]transport.Message[ev, string], len(ids))
	for i, id := range ids {
		out[i] = transport.Message[ev, string]{Handle: id, Event: ev{key, i + 1}}
	}
	return out
}

// newTwoRoomRig returns a rig whose lanes have room for two events, and
// whose handler holds each key's first event until release is closed.
func newTwoRoomRig(t *testing.T) (*streamRig, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	r := newStreamRig(t, func(ctx context.Context, _ string, e ev) error {
		if e.Seq == 1 {
			<-release
		}
		return nil
	}, runtime.Config[string, ev]{MaxActive: 2, Backlog: runtime.Backlog{PerKey: 2, Total: 2}})
	return r, release
}

// A message the lanes refuse for lack of room waits, with every later
// message of its stream, and goes on, in order, when a settlement wakes
// the stream's receiver: the hooks say when to pause and resume fetching.
func TestStreamWaitsForRoomInOrder(t *testing.T) {
	r, release := newTwoRoomRig(t)
	var mu sync.Mutex
	var paused, resumed int
	wake := make(chan struct{}, 1)
	s := r.in.Open("unit", transport.StreamHooks{
		Pause:  func(held bool) { mu.Lock(); paused++; mu.Unlock() },
		Resume: func() { mu.Lock(); resumed++; mu.Unlock() },
		Wake: func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		},
	})
	if err := s.Receive(msgs("k", "m1", "m2", "m3", "m4")); err != nil {
		t.Fatal(err)
	}
	if !s.Waiting() {
		t.Fatal("with room for two events, the stream does not wait")
	}
	// Later messages join the wait, in order, even when there is room.
	if err := s.Receive([]transport.Message[ev, string]{{Handle: "m5", Event: ev{"other", 1}}}); err != nil {
		t.Fatal(err)
	}
	close(release)
	for s.Waiting() {
		<-wake
		if err := s.Retry(); err != nil {
			t.Fatal(err)
		}
	}
	r.await(t, "every message settled", func() bool { return len(r.settled) == 5 })
	r.mu.Lock()
	defer r.mu.Unlock()
	// k's events run in order. The other key's event was offered after
	// m4, which needed room that only m3's end could free (a total of two):
	// so it runs after k 3, though it may run beside k 4, a different key.
	var ks []int
	other := -1
	for i, e := range r.handled {
		if e.Key == "k" {
			ks = append(ks, e.Seq)
		} else {
			other = i
		}
	}
	if !slices.Equal(ks, []int{1, 2, 3, 4}) {
		t.Fatalf("handled %v: want k's events in order", r.handled)
	}
	if other < 3 {
		t.Fatalf("handled %v: the other key's event ran before k 3, ahead of the wait", r.handled)
	}
	for id, st := range r.settled {
		if st != transport.Finished {
			t.Errorf("%s settled %v", id, st)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if paused == 0 || resumed != 1 {
		t.Errorf("paused %d times, resumed %d: want a pause and one resume", paused, resumed)
	}
}

// The messages that wait for room are the stream's own: the receiver may
// reuse its slice once Receive returns (the Kafka consumer decodes every
// poll into one buffer), and what waits is still what it received.
func TestStreamKeepsNotTheReceiversSlice(t *testing.T) {
	r, release := newTwoRoomRig(t)
	wake := make(chan struct{}, 1)
	s := r.in.Open("unit", transport.StreamHooks{Wake: func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}})
	buf := msgs("k", "m1", "m2", "m3", "m4")
	if err := s.Receive(buf); err != nil {
		t.Fatal(err)
	}
	if !s.Waiting() {
		t.Fatal("with room for two events, the stream does not wait")
	}
	for i := range buf { // the receiver's next poll, decoded into the same buffer
		buf[i] = transport.Message[ev, string]{Handle: "reused", Event: ev{"reused", 99}}
	}
	close(release)
	for s.Waiting() {
		<-wake
		if err := s.Retry(); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"m1", "m2", "m3", "m4"}
	r.await(t, "four events handled and settled", func() bool {
		_, reused := r.settled["reused"]
		all := true
		for _, id := range ids {
			_, ok := r.settled[id]
			all = all && ok
		}
		return len(r.handled) == 4 && (all || reused)
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	want := []ev{{"k", 1}, {"k", 2}, {"k", 3}, {"k", 4}}
	if !slices.Equal(r.handled, want) {
		t.Errorf("handled %v, want %v", r.handled, want)
	}
	for _, id := range ids {
		if st, ok := r.settled[id]; !ok || st != transport.Finished {
			t.Errorf("%s: settled %v (%v), want Finished", id, st, ok)
		}
	}
	if _, ok := r.settled["reused"]; ok {
		t.Error("a message written into the receiver's slice after Receive was settled")
	}
}

// A stream wakes its receiver once as it starts waiting (a settlement may
// have come before it waited), and not at once when a Retry is refused
// again: that wake had the receiver retry at once, in a loop that never
// let it receive (the Kafka feeder spun while a partition was held for
// its commit metadata). A retry refused again is woken after a delay, for
// room that no settlement reports; settlements wake it sooner (see
// TestStreamWaitsForRoomInOrder).
func TestStreamRetryRefusedAgainWakesLater(t *testing.T) {
	r := newStreamRig(t, func(context.Context, string, ev) error { return nil }, runtime.Config[string, ev]{})
	var holding atomic.Bool
	holding.Store(true)
	r.admit = func(id string) transport.Admission {
		if id == "m1" && holding.Load() {
			return transport.AdmitHold
		}
		return transport.AdmitTake
	}
	var wakes atomic.Int32
	woken := make(chan struct{}, 16)
	s := r.in.Open("unit", transport.StreamHooks{Wake: func() {
		wakes.Add(1)
		select { // a full channel has a wake to see already
		case woken <- struct{}{}:
		default:
		}
	}})
	if err := s.Receive(msgs("k", "m1", "m2")); err != nil {
		t.Fatal(err)
	}
	if !s.Waiting() || wakes.Load() != 1 {
		t.Fatalf("waiting %v after %d wakes: want a wait and one wake as it began", s.Waiting(), wakes.Load())
	}
	<-woken
	const retries = 10
	for range retries {
		if err := s.Retry(); err != nil {
			t.Fatal(err)
		}
	}
	// Delayed wakes may come meanwhile (10 ms, then 20, 40...), but one
	// per retry was the spin.
	if n := wakes.Load(); !s.Waiting() || n >= 1+retries {
		t.Fatalf("waiting %v after %d wakes: want the retries, refused again, not to wake at once", s.Waiting(), n)
	}
	<-woken // the delayed wake, with no settlement to give one
	holding.Store(false)
	if err := s.Retry(); err != nil {
		t.Fatal(err)
	}
	r.await(t, "both messages settled", func() bool { return len(r.settled) == 2 })
	if s.Waiting() {
		t.Error("the stream still waits after its messages went on")
	}
}

// A bad message, and one the lanes refuse as invalid, go to the
// dead-letter destination in their place, and the stream goes on; a
// failed write settles the message Unfinished.
func TestStreamDeadLettersInPlace(t *testing.T) {
	r := newStreamRig(t, func(context.Context, string, ev) error { return nil }, runtime.Config[string, ev]{})
	r.dlAnswer = func(id string, done func(error)) {
		if id == "bad2" {
			done(errors.New("the dead-letter destination is down"))
			return
		}
		r.note(func() { r.dead = append(r.dead, id) })
		done(nil)
	}
	s := r.in.Open("unit", transport.StreamHooks{})
	ms := msgs("k", "m1", "bad1", "m2", "bad2", "m3")
	ms[1].Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: errors.New("{")}
	ms[3].Bad = &transport.Bad{Reason: transport.ReasonMissingType, Err: errors.New("no type")}
	ms = append(ms, transport.Message[ev, string]{Handle: "invalid", Event: ev{"", 1}})
	if err := s.Receive(ms); err != nil {
		t.Fatal(err)
	}
	r.await(t, "every message settled", func() bool { return len(r.settled) == len(ms) })
	want := map[string]transport.Settlement{"m1": transport.Finished, "bad1": transport.Finished, "m2": transport.Finished,
		"bad2": transport.Unfinished, "m3": transport.Finished, "invalid": transport.Finished}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, st := range want {
		if r.settled[id] != st {
			t.Errorf("%s settled %v, want %v", id, r.settled[id], st)
		}
	}
	if len(r.dead) != 2 || r.dead[0] != "bad1" || r.dead[1] != "invalid" {
		t.Errorf("dead letters %v, want bad1 and invalid", r.dead)
	}
	st := r.in.Stats()
	if st.DeadLettered != 2 || st.DeadLetterErrors != 1 || st.DeadLetteredBy[transport.ReasonInvalidEvent] != 1 {
		t.Errorf("stats %+v: want 2 dead letters (one invalid event) and one failed write", st)
	}
}

// Admit skips what the transport knows is finished and holds the stream
// until a Retry admits it; End drops what waits and waits for the
// dead-letter writes in flight, so that the messages they wrote settle
// Finished before the ownership ends.
func TestStreamAdmitAndEnd(t *testing.T) {
	r := newStreamRig(t, func(context.Context, string, ev) error { return nil }, runtime.Config[string, ev]{})
	hold := true
	r.admit = func(id string) transport.Admission {
		switch {
		case id == "m1":
			return transport.AdmitSkip
		case id == "m3" && hold:
			return transport.AdmitHold
		}
		return transport.AdmitTake
	}
	var write func(error)
	r.dlAnswer = func(id string, done func(error)) { write = done } // answered later
	s := r.in.Open("unit", transport.StreamHooks{})
	ms := msgs("k", "m1", "m2", "m3", "m4")
	ms[1].Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: errors.New("{")}
	if err := s.Receive(ms); err != nil {
		t.Fatal(err)
	}
	if !s.Waiting() || write == nil {
		t.Fatalf("waiting %v, dead letter under way %v: want m3 held and m2's dead letter written", s.Waiting(), write != nil)
	}
	hold = false
	if err := s.Retry(); err != nil {
		t.Fatal(err)
	}
	if s.Waiting() {
		t.Fatal("the stream still waits after Admit took m3")
	}
	r.await(t, "m3 and m4 settled", func() bool { return r.settled["m3"] != 0 && r.settled["m4"] != 0 })
	ended := make(chan int)
	go func() {
		n, _ := r.in.End(context.Background(), s)
		ended <- n
	}()
	for m := range r.logged { // End says it waits for the write
		if strings.Contains(m, "waiting for dead-letter writes") {
			break
		}
	}
	select {
	case <-ended:
		t.Fatal("End returned while a dead-letter write was in flight")
	default:
	}
	write(nil)
	if n := <-ended; n != 0 {
		t.Errorf("End settled %d messages Unfinished, want none (all were finished)", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.settled["m1"]; ok {
		t.Error("the skipped message was settled: it was never taken")
	}
	if r.settled["m2"] != transport.Finished || r.settled["m3"] != transport.Finished || r.settled["m4"] != transport.Finished {
		t.Errorf("settled %v: want m2 (dead-lettered), m3 and m4 Finished", r.settled)
	}
	// After End, nothing more is taken: the broker gives it to the next
	// owner.
	if err := s.Receive(msgs("k", "late")); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.settled["late"]; ok || r.in.Unsettled() != 0 {
		t.Error("a message received after End was taken")
	}
}

// Outcomes before Start are ignored, and a second Start of a key intake is
// refused.
func TestIntakesBeforeStart(t *testing.T) {
	in, err := transport.NewStreamIntake[string](transport.StreamConfig[ev, string]{
		Settle: func(string, transport.Settlement) {}, DeadLetter: func(transport.Message[ev, string], func(error)) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	in.OnOutcome("k", 1, runtime.Handled) // no panic, nothing to settle
	if in.Unsettled() != 0 || in.Parked() != 0 || in.ParksInMemory() {
		t.Error("an intake that did not start reports messages")
	}
	if _, err := transport.NewStreamIntake[string](transport.StreamConfig[ev, string]{}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("a stream intake without Settle: %v, want ErrInvalidConfig", err)
	}
}

// A message that parks in memory between a caller's look at the intake
// and its WaitRoom makes WaitRoom return at once: the park wakes nobody
// then (nobody waits yet), and the caller's look, which said the room was
// full of messages in flight, would stay stale. (Kafka's feeder missed
// its warning that parked records held MaxInFlight so, once in CI.)
func TestWaitRoomSeesAParkSinceTheLook(t *testing.T) {
	r := newStreamRig(t, func(context.Context, string, ev) error {
		return runtime.Permanent(errors.New("broken"))
	}, runtime.Config[string, ev]{OnExhausted: runtime.ParkKey})
	wake := make(chan struct{}, 1)
	s := r.in.Open("unit", transport.StreamHooks{Wake: func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}})
	looked := r.in.Parks() // the caller's look: two in flight, none parked
	if err := s.Receive(msgs("bad", "m1", "m2")); err != nil {
		t.Fatal(err)
	}
	for r.in.Parked() < 2 { // each park in memory wakes the stream
		<-wake
	}
	if !r.in.ParksInMemory() || r.in.Unsettled() != 2 {
		t.Fatalf("parks in memory %v, unsettled %d: want both messages parked, unsettled", r.in.ParksInMemory(), r.in.Unsettled())
	}
	bound, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure's bound, not a wait
	defer cancel()
	if !r.in.WaitRoom(bound, nil, 2, looked) {
		t.Fatal("WaitRoom waited, though messages parked since the caller's look")
	}
	// Nothing changed since a look now: WaitRoom waits (until its context
	// ends, here at once).
	done, stop := context.WithCancel(context.Background())
	stop()
	if r.in.WaitRoom(done, nil, 2, r.in.Parks()) {
		t.Fatal("WaitRoom returned room, with the room full and no park since the look")
	}
}
