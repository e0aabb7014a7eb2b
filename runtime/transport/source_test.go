package transport_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// tev is the event of the transport tests: the n-th message of a key.
type tev struct {
	Key string
	N   int
}

func (e tev) EventKey() string { return e.Key }

// settlements records what a Source settled, by message.
type settlements struct {
	mu   sync.Mutex
	got  map[int][]transport.Settlement
	wait map[int]chan struct{}
}

func newSettlements() *settlements {
	return &settlements{got: map[int][]transport.Settlement{}, wait: map[int]chan struct{}{}}
}

func (s *settlements) settle(m int, st transport.Settlement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[m] = append(s.got[m], st)
	if ch, ok := s.wait[m]; ok {
		close(ch)
		delete(s.wait, m)
	}
}

// of returns the settlements of message m so far.
func (s *settlements) of(m int) []transport.Settlement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]transport.Settlement(nil), s.got[m]...)
}

// settled returns a channel closed once message m is settled.
func (s *settlements) settled(m int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if len(s.got[m]) > 0 {
		close(ch)
	} else {
		s.wait[m] = ch
	}
	return ch
}

func awaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// sourceOver starts an engine for h whose outcomes go to a new source, and
// returns both; cfg adjusts the engine's configuration.
func sourceOver(t *testing.T, h runtime.Handler[string, tev], cfg func(*runtime.Config[string, tev])) (*transport.Source[string, tev, int], *runtime.Engine[string, tev], *settlements) {
	t.Helper()
	var src *transport.Source[string, tev, int]
	rc := runtime.Config[string, tev]{
		Logger:    slog.New(slog.DiscardHandler),
		Retry:     runtime.Retry{Attempts: 1},
		OnOutcome: func(k string, tag uint64, o runtime.Outcome) { src.OnOutcome(k, tag, o) },
	}
	if cfg != nil {
		cfg(&rc)
	}
	e, err := runtime.New(h, rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	s := newSettlements()
	if src, err = transport.NewSource[string](transport.EngineTarget(e), s.settle); err != nil {
		t.Fatal(err)
	}
	return src, e, s
}

// offer takes message m of o and offers its event, failing the test on a
// refusal.
func offer(t *testing.T, src *transport.Source[string, tev, int], o *transport.Ownership, m int, e tev) uint64 {
	t.Helper()
	tag, err := src.Take(o, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Offer(transport.DoneContext(), tag, e); err != nil {
		t.Fatal(err)
	}
	return tag
}

// Every message is settled once, Finished, when its event is handled.
func TestSourceSettlesHandledMessages(t *testing.T) {
	src, _, s := sourceOver(t, func(context.Context, string, tev) error { return nil }, nil)
	o := src.Own()
	for m := range 100 {
		offer(t, src, o, m, tev{fmt.Sprint("k", m%7), m})
	}
	for m := range 100 {
		awaitClosed(t, s.settled(m), fmt.Sprint("message ", m))
	}
	for m := range 100 {
		if got := s.of(m); len(got) != 1 || got[0] != transport.Finished {
			t.Fatalf("message %d settled %v", m, got)
		}
	}
	if live, _ := src.UnsettledOf(o); live != 0 || src.Unsettled() != 0 {
		t.Errorf("%d messages of the ownership still live, %d in all", live, src.Unsettled())
	}
}

// With parks in memory a parked message stays unsettled; resolving the park
// settles it: a replay when the replayed event is handled, a discard at
// once. Both are Finished.
func TestSourceParkInMemorySettlesOnResolution(t *testing.T) {
	var mu sync.Mutex
	broken := map[string]bool{"r": true, "d": true}
	src, e, s := sourceOver(t, func(_ context.Context, key string, _ tev) error {
		mu.Lock()
		defer mu.Unlock()
		if broken[key] {
			return runtime.Permanent(errors.New("broken"))
		}
		return nil
	}, nil)
	if !src.ParksInMemory() {
		t.Fatal("an engine without a park store parks in memory")
	}
	o := src.Own()
	offer(t, src, o, 1, tev{"r", 1})
	offer(t, src, o, 2, tev{"r", 2}) // joins the park
	offer(t, src, o, 3, tev{"d", 1})
	offer(t, src, o, 4, tev{"ok", 1})
	awaitClosed(t, s.settled(4), "the healthy key's message")
	ctx := context.Background()
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if live, parked := src.UnsettledOf(o); live != 3 || parked != 3 {
		t.Fatalf("held %d, parked %d; want 3 parked messages unsettled", live, parked)
	}
	mu.Lock()
	broken["r"] = false
	mu.Unlock()
	if err := e.Replay(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Discard(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	for m := 1; m <= 3; m++ {
		awaitClosed(t, s.settled(m), fmt.Sprint("message ", m))
		if got := s.of(m); len(got) != 1 || got[0] != transport.Finished {
			t.Errorf("message %d settled %v, want finished once", m, got)
		}
	}
	if live, parked := src.UnsettledOf(o); live != 0 || parked != 0 {
		t.Errorf("held %d, parked %d after the replay and the discard", live, parked)
	}
}

// With a park store the park keeps the event: a parked message is
// Finished at once.
func TestSourceParkStoreFinishes(t *testing.T) {
	src, _, s := sourceOver(t, func(context.Context, string, tev) error {
		return runtime.Permanent(errors.New("broken"))
	}, func(rc *runtime.Config[string, tev]) { rc.Parks = runtime.NewMemoryParkStore[string, tev]() })
	if src.ParksInMemory() {
		t.Fatal("an engine with a park store does not park in memory")
	}
	offer(t, src, src.Own(), 1, tev{"k", 1})
	awaitClosed(t, s.settled(1), "the parked message")
	if got := s.of(1); got[0] != transport.Finished {
		t.Errorf("parked message settled %v", got)
	}
}

// Ending an ownership withdraws its queued and parked events, which never
// start, cancels the running one when End's context ends and waits for its
// handler to return, settles every message Unfinished, and refuses further
// takes and offers. Another ownership's messages go on.
func TestSourceEndFencesOwnership(t *testing.T) {
	started := make(chan string, 16)
	var mu sync.Mutex
	var starts []int
	src, _, s := sourceOver(t, func(ctx context.Context, key string, e tev) error {
		mu.Lock()
		starts = append(starts, e.N)
		mu.Unlock()
		started <- key
		switch key {
		case "run":
			<-ctx.Done() // until End cancels it
			return ctx.Err()
		case "park":
			return runtime.Permanent(errors.New("broken"))
		}
		return nil
	}, func(rc *runtime.Config[string, tev]) {
		rc.MaxActive = 4
		// The cancelled attempt fails; the withdrawal is served before its
		// retry would start.
		rc.Retry = runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}
	})
	old, other := src.Own(), src.Own()
	offer(t, src, old, 1, tev{"run", 1})
	if k := <-started; k != "run" {
		t.Fatalf("started %s", k)
	}
	offer(t, src, old, 2, tev{"run", 2}) // queued behind the running one
	offer(t, src, old, 3, tev{"park", 3})
	if k := <-started; k != "park" {
		t.Fatalf("started %s", k)
	}
	offer(t, src, old, 4, tev{"park", 4}) // joins the park
	kept := offer(t, src, other, 5, tev{"run", 5})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	left, err := src.End(ctx, old)
	if !errors.Is(err, context.DeadlineExceeded) || left != 0 {
		t.Errorf("End returned %d, %v; want the deadline, and the cancelled event withdrawn once its handler returned", left, err)
	}
	for m := 1; m <= 4; m++ {
		if got := s.of(m); len(got) != 1 || got[0] != transport.Unfinished {
			t.Errorf("message %d settled %v, want unfinished once", m, got)
		}
	}
	if _, err := src.Take(old, 9); !errors.Is(err, transport.ErrOwnershipEnded) {
		t.Errorf("Take after End: %v", err)
	}
	if err := src.Offer(transport.DoneContext(), kept, tev{"run", 5}); err == nil {
		t.Error("a message offered twice was accepted")
	}
	// The other ownership's message runs after the cancelled one (same
	// key); End it too so that its handler returns.
	if k := <-started; k != "run" {
		t.Fatalf("started %s", k)
	}
	if _, err := src.End(transport.DoneContext(), other); !errors.Is(err, context.Canceled) {
		t.Errorf("End of the other ownership: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{1, 3, 5}; fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Errorf("handler starts %v, want %v: the ended ownership's queued and parked events must never start", starts, want)
	}
	if src.Unsettled() != 0 {
		t.Errorf("%d messages live after both ownerships ended", src.Unsettled())
	}
}

// A target the source cannot settle for is refused: no subscriber, one
// without OnOutcome, one under a drop policy, subscribers that park
// differently; and so is a subscriber with a drop policy added later.
func TestSourceRefusesTargets(t *testing.T) {
	noop := func(context.Context, string, tev) error { return nil }
	report := func(string, uint64, runtime.Outcome) {}
	settle := func(int, transport.Settlement) {}
	cases := map[string][]runtime.Config[string, tev]{
		"no subscriber":  nil,
		"no OnOutcome":   {{}},
		"drop-newest":    {{OnOutcome: report, Backlog: runtime.Backlog{WhenFull: runtime.DropNewest}}},
		"drop-oldest":    {{OnOutcome: report, Backlog: runtime.Backlog{WhenFull: runtime.DropOldest}}},
		"parks differ":   {{OnOutcome: report}, {OnOutcome: report, Parks: runtime.NewMemoryParkStore[string, tev]()}},
		"one of several": {{OnOutcome: report}, {OnOutcome: report, Backlog: runtime.Backlog{WhenFull: runtime.DropNewest}}},
	}
	for name, cfgs := range cases {
		topic := runtime.NewTopic[string, tev]()
		for i, cfg := range cfgs {
			cfg.Name = fmt.Sprint("s", i)
			cfg.Logger = slog.New(slog.DiscardHandler)
			if _, err := topic.Subscribe(noop, cfg); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := transport.NewSource[string](transport.TopicTarget(topic), settle); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: NewSource returned %v", name, err)
		}
		_ = topic.Close(context.Background())
	}

	topic := runtime.NewTopic[string, tev]()
	defer topic.Close(context.Background())
	var src *transport.Source[string, tev, int]
	forward := func(k string, tag uint64, o runtime.Outcome) { src.OnOutcome(k, tag, o) }
	if _, err := topic.Subscribe(noop, runtime.Config[string, tev]{Name: "good", OnOutcome: forward}); err != nil {
		t.Fatal(err)
	}
	s := newSettlements()
	var err error
	if src, err = transport.NewSource[string](transport.TopicTarget(topic), s.settle); err != nil {
		t.Fatal(err)
	}
	if _, err := topic.Subscribe(noop, runtime.Config[string, tev]{Name: "late", OnOutcome: forward,
		Backlog: runtime.Backlog{WhenFull: runtime.DropNewest}}); err != nil {
		t.Fatal(err)
	}
	tag, _ := src.Take(src.Own(), 1)
	if err := src.Offer(transport.DoneContext(), tag, tev{"k", 1}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("an offer reaching a drop-newest subscriber added later returned %v", err)
	}
}

// A message given to two subscribers settles when both are done: when one
// parks it in memory, only the replay there settles it.
func TestSourceWaitsForEverySubscriber(t *testing.T) {
	topic := runtime.NewTopic[string, tev]()
	defer topic.Close(context.Background())
	var src *transport.Source[string, tev, int]
	forward := func(k string, tag uint64, o runtime.Outcome) { src.OnOutcome(k, tag, o) }
	var mu sync.Mutex
	broken := true
	quiet := slog.New(slog.DiscardHandler)
	if _, err := topic.Subscribe(func(context.Context, string, tev) error { return nil },
		runtime.Config[string, tev]{Name: "fine", OnOutcome: forward, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	flaky, err := topic.Subscribe(func(context.Context, string, tev) error {
		mu.Lock()
		defer mu.Unlock()
		if broken {
			return runtime.Permanent(errors.New("broken"))
		}
		return nil
	}, runtime.Config[string, tev]{Name: "flaky", OnOutcome: forward, Retry: runtime.Retry{Attempts: 1}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := newSettlements()
	if src, err = transport.NewSource[string](transport.TopicTarget(topic), s.settle); err != nil {
		t.Fatal(err)
	}
	o := src.Own()
	offer(t, src, o, 1, tev{"k", 1})
	ctx := context.Background()
	if err := topic.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.of(1); len(got) != 0 {
		t.Fatalf("settled %v while a subscriber holds it in its park", got)
	}
	mu.Lock()
	broken = false
	mu.Unlock()
	if err := flaky.Replay(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	awaitClosed(t, s.settled(1), "the replayed message")
	if got := s.of(1); len(got) != 1 || got[0] != transport.Finished {
		t.Errorf("settled %v", got)
	}
}

// Resolve settles a message the transport handled itself, and refuses one
// that subscribers hold.
func TestSourceResolve(t *testing.T) {
	src, _, s := sourceOver(t, func(context.Context, string, tev) error { return nil }, nil)
	o := src.Own()
	tag, _ := src.Take(o, 1)
	if err := src.Resolve(tag, transport.Finished); err != nil {
		t.Fatal(err)
	}
	if got := s.of(1); len(got) != 1 || got[0] != transport.Finished {
		t.Errorf("resolved message settled %v", got)
	}
	if err := src.Resolve(tag, transport.Unfinished); err != nil || len(s.of(1)) != 1 {
		t.Errorf("resolving a settled message again: %v, settlements %v", err, s.of(1))
	}
	if err := src.Resolve(tag, transport.Settlement(9)); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("an unknown settlement: %v", err)
	}
	if transport.Finished.String() != "finished" || transport.Settlement(9).String() != "Settlement(9)" {
		t.Error("settlement names")
	}
}

// scriptedTarget is a Target whose calls the test scripts: SubmitTagged
// accepts (after waiting for hold, when set), Withdraw runs withdraw.
type scriptedTarget struct {
	entered  chan struct{} // closed when SubmitTagged is called, when set
	hold     chan struct{}
	withdraw func(ctx context.Context, match func(uint64) bool) (int, error)
	answer   func() (int, error) // SubmitTagged's answer, when set; else 1, nil
}

func (s *scriptedTarget) SubmitTagged(_ context.Context, _ tev, _ uint64, _ int) (int, error) {
	if s.entered != nil {
		close(s.entered)
	}
	if s.hold != nil {
		<-s.hold
	}
	if s.answer != nil {
		return s.answer()
	}
	return 1, nil
}

func (s *scriptedTarget) Withdraw(ctx context.Context, match func(uint64) bool) (int, error) {
	return s.withdraw(ctx, match)
}

func (s *scriptedTarget) Subscriptions() []transport.Subscription {
	return []transport.Subscription{{Name: "scripted", ReportsOutcomes: true, ParksInMemory: true}}
}

// A target whose first subscriber took an event that the second refuses as
// invalid is misconfigured: Offer must not report the message as invalid,
// or a transport would set it aside as bad while a subscriber runs it and
// its settlement waits for an outcome that Resolve cannot give (found in
// review: Kafka dead-lettered such a record and its partition's commit
// stalled).
func TestSourceOfferInvalidAfterASubscriberTookIt(t *testing.T) {
	target := &scriptedTarget{answer: func() (int, error) {
		return 1, fmt.Errorf("second subscriber: %w", runtime.ErrInvalidEvent)
	}}
	src, err := transport.NewSource[string](target, newSettlements().settle)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := src.Take(src.Own(), 0)
	err = src.Offer(transport.DoneContext(), tag, tev{"k", 0})
	if errors.Is(err, runtime.ErrInvalidEvent) || !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("Offer: %v; want a configuration error, not an invalid event", err)
	}
}

// Regression (found by TestSourceStress): an Offer in progress while Take
// grows the arena settled a stale copy of its slot, so its message never
// settled.
func TestSourceOfferWhileArenaGrows(t *testing.T) {
	target := &scriptedTarget{entered: make(chan struct{}), hold: make(chan struct{})}
	s := newSettlements()
	src, err := transport.NewSource[string](target, s.settle)
	if err != nil {
		t.Fatal(err)
	}
	o := src.Own()
	tag, _ := src.Take(o, 0)
	offered := make(chan error, 1)
	go func() { offered <- src.Offer(transport.DoneContext(), tag, tev{"k", 0}) }()
	<-target.entered
	for m := 1; m <= 1000; m++ { // the arena moves while the Offer waits
		if _, err := src.Take(o, m); err != nil {
			t.Fatal(err)
		}
	}
	close(target.hold)
	if err := <-offered; err != nil {
		t.Fatal(err)
	}
	src.OnOutcome("k", tag, runtime.Handled)
	if got := s.of(0); len(got) != 1 || got[0] != transport.Finished {
		t.Errorf("the offered message settled %v, want finished", got)
	}
}

// Regression (found by TestSourceStress): when End's deadline passed, an
// attempt that a worker began just as the running attempts were cancelled
// escaped the cancellation and started after End returned. End now keeps
// waiting for the selected events that started (up to a grace) after it
// cancels them.
func TestSourceEndWaitsForAttemptBegunAtDeadline(t *testing.T) {
	began, finished := make(chan struct{}), make(chan struct{})
	var once sync.Once
	target := &scriptedTarget{}
	target.withdraw = func(ctx context.Context, _ func(uint64) bool) (int, error) {
		if ctx.Err() != nil {
			// The cancelling pass: the worker begins its attempt right
			// after it, uncancelled, and the attempt runs to its end.
			once.Do(func() {
				go func() {
					close(began)
					time.Sleep(20 * time.Millisecond) // the handler's work, not a synchronisation
					close(finished)
				}()
			})
			return 0, ctx.Err()
		}
		select { // the waiting pass: until the taken event finished
		case <-finished:
			return 0, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	src, err := transport.NewSource[string](target, newSettlements().settle)
	if err != nil {
		t.Fatal(err)
	}
	o := src.Own()
	tag, _ := src.Take(o, 1)
	if err := src.Offer(transport.DoneContext(), tag, tev{"k", 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.End(transport.DoneContext(), o); !errors.Is(err, context.Canceled) {
		t.Errorf("End returned %v", err)
	}
	select {
	case <-finished:
	default:
		t.Error("End returned while an attempt of its ownership that began at the deadline was still running")
	}
	<-began
}

// Ending an ownership withdraws its events from every subscriber of a
// topic (Topic.Withdraw asks them at once).
func TestSourceEndWithdrawsFromEverySubscriber(t *testing.T) {
	topic := runtime.NewTopic[string, tev]()
	defer topic.Close(context.Background())
	var src *transport.Source[string, tev, int]
	forward := func(k string, tag uint64, o runtime.Outcome) { src.OnOutcome(k, tag, o) }
	gate := make(chan struct{})
	var mu sync.Mutex
	starts := map[string][]int{}
	for _, name := range []string{"x", "y"} {
		if _, err := topic.Subscribe(func(ctx context.Context, _ string, e tev) error {
			mu.Lock()
			starts[name] = append(starts[name], e.N)
			mu.Unlock()
			if e.N == 1 {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}, runtime.Config[string, tev]{Name: name, OnOutcome: forward, Logger: slog.New(slog.DiscardHandler),
			Retry: runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}}); err != nil {
			t.Fatal(err)
		}
	}
	s := newSettlements()
	var err error
	if src, err = transport.NewSource[string](transport.TopicTarget(topic), s.settle); err != nil {
		t.Fatal(err)
	}
	if subs := transport.TopicSubscriptions(topic); len(subs) != 2 || subs[1].Name != "y" || !subs[0].ReportsOutcomes {
		t.Fatalf("subscriptions %+v", subs)
	}
	o := src.Own()
	for m := 1; m <= 3; m++ {
		offer(t, src, o, m, tev{"k", m})
	}
	if _, err := src.End(transport.DoneContext(), o); !errors.Is(err, context.Canceled) {
		t.Errorf("End returned %v", err)
	}
	close(gate)
	if err := topic.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"x", "y"} {
		if got := starts[name]; len(got) > 1 || (len(got) == 1 && got[0] != 1) {
			t.Errorf("subscriber %s started %v; want at most the first event, before End", name, got)
		}
	}
	for m := 1; m <= 3; m++ {
		if got := s.of(m); len(got) != 1 || got[0] != transport.Unfinished {
			t.Errorf("message %d settled %v", m, got)
		}
	}
	if n := topic.Stats()["x"].Withdrawn + topic.Stats()["y"].Withdrawn; n < 4 {
		t.Errorf("%d events withdrawn over both subscribers, want at least the four queued", n)
	}
}

// End whose context ends with a cause cancels the running handler with
// that cause, so the handler learns why (a lease lost, say).
func TestSourceEndCancelsWithItsCause(t *testing.T) {
	started := make(chan struct{})
	cause := make(chan error, 1)
	src, _, s := sourceOver(t, func(ctx context.Context, _ string, _ tev) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, nil)
	o := src.Own()
	offer(t, src, o, 1, tev{"k", 1})
	awaitClosed(t, started, "the handler to start")
	lost := fmt.Errorf("%w: the visibility of message 1 lapsed", transport.ErrLeaseLost)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(lost)
	if _, err := src.End(ctx, o); !errors.Is(err, context.Canceled) {
		t.Errorf("End returned %v, want context.Canceled", err)
	}
	if got := <-cause; got != lost || !errors.Is(got, transport.ErrOwnershipEnded) {
		t.Errorf("the handler's cause is %v, want %v (which wraps ErrOwnershipEnded)", got, lost)
	}
	if got := s.of(1); len(got) != 1 || got[0] != transport.Unfinished {
		t.Errorf("message 1 settled %v, want Unfinished once", got)
	}
}
