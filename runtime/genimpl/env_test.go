package genimpl_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// walletRecorder is a Wallet handler that records the events of its
// batches, and fails every batch that holds a Debited of failAmount.
type walletRecorder struct {
	mu         sync.Mutex
	got        []ledger.WalletEvent
	failAmount int64
}

func (r *walletRecorder) HandleWalletBatch(_ context.Context, _ string, events []ledger.WalletEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range events {
		if d, ok := e.(ledger.Debited); ok && d.Amount == r.failAmount {
			return runtime.Permanent(errors.New("refused"))
		}
	}
	r.got = append(r.got, events...)
	return nil
}

func (r *walletRecorder) events() []ledger.WalletEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ledger.WalletEvent(nil), r.got...)
}

// skipped records what a subscriber's OnSkip is told.
type skipped struct {
	mu     sync.Mutex
	events []any
}

func (s *skipped) add(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
}

func (s *skipped) all() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.events...)
}

// TestEnvelopeCarriesEventsByValue publishes the events of an entity whose
// events travel by value (Wallet: in a body, not boxed) every way a
// publisher can: the typed method, the generic Publish with a value and
// with a pointer. The batch handler gets them back as the entity's events,
// equal to what was published; a duplicate reaches OnSkip as the event it
// was; and what is not an event is refused without reaching anybody.
func TestEnvelopeCarriesEventsByValue(t *testing.T) {
	ctx := context.Background()
	h := &walletRecorder{failAmount: -1}
	var skips skipped
	d, err := ledger.NewWalletDispatcher(h, func(c *ledger.WalletConfig) {
		c.OnSkip = func(_ string, ev ledger.WalletEvent, _ string) { skips.add(ev) }
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	opened := ledger.WalletOpened{WalletID: "w", Version: 1, Owner: "ann"}
	credited := ledger.Credited{WalletID: "w", Version: 2, Amount: 5}
	debited := ledger.Debited{WalletID: "w", Version: 3, Amount: 2}
	if err := d.PublishWalletOpened(ctx, opened); err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(ctx, credited); err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(ctx, &debited); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.PublishCredited(ctx, credited); err != nil { // a duplicate
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := []ledger.WalletEvent{opened, credited, debited}
	if got := h.events(); !reflect.DeepEqual(got, want) {
		t.Errorf("handled %#v, want %#v", got, want)
	}
	if got := skips.all(); !reflect.DeepEqual(got, []any{credited}) {
		t.Errorf("OnSkip told %#v, want the duplicate %#v", got, credited)
	}
	if v, err := d.Version(ctx, ledger.WalletFirstSubscriber, "w"); err != nil || v != 3 {
		t.Errorf("version = %d, %v; want 3", v, err)
	}

	for name, bad := range map[string]ledger.WalletEvent{
		"nil pointer":   (*ledger.Credited)(nil),
		"nil event":     nil,
		"empty key":     ledger.Credited{Version: 4},
		"version 0":     ledger.Credited{WalletID: "w"},
		"typed, no key": ledger.Debited{Version: 4},
	} {
		var err error
		if d2, ok := bad.(ledger.Debited); ok {
			err = d.PublishDebited(ctx, d2)
		} else {
			err = d.Publish(ctx, bad)
		}
		if !errors.Is(err, runtime.ErrInvalidEvent) {
			t.Errorf("%s: Publish = %v, want an error wrapping runtime.ErrInvalidEvent", name, err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(h.events()); got != len(want) {
		t.Errorf("%d events handled after the refused ones, want %d", got, len(want))
	}
}

// TestEnvelopeParkedEventsComeBackAsEvents parks a key of an entity whose
// events travel by value, in memory, and checks that ParkedEvents gives
// the entity's events back, equal to what was published, and that a
// replay hands them to the handler.
func TestEnvelopeParkedEventsComeBackAsEvents(t *testing.T) {
	ctx := context.Background()
	h := &walletRecorder{failAmount: 7}
	d, err := ledger.NewWalletDispatcher(h, func(c *ledger.WalletConfig) {
		c.OnExhausted = runtime.ParkKey
		c.Retry = runtime.Retry{Attempts: 1}
		c.Linger = 0
		c.Logger = slog.New(slog.DiscardHandler)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	opened := ledger.WalletOpened{WalletID: "p", Version: 1, Owner: "bob"}
	debited := ledger.Debited{WalletID: "p", Version: 2, Amount: 7}
	if err := d.PublishWalletOpened(ctx, opened); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.PublishDebited(ctx, debited); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	parked, err := d.ParkedEvents(ctx, ledger.WalletFirstSubscriber, "p")
	if err != nil {
		t.Fatal(err)
	}
	var got []ledger.WalletEvent
	for _, p := range parked {
		got = append(got, p.Event)
	}
	if !reflect.DeepEqual(got, []ledger.WalletEvent{debited}) {
		t.Fatalf("parked %#v, want %#v", got, debited)
	}
	h.mu.Lock()
	h.failAmount = -1
	h.mu.Unlock()
	if err := d.Replay(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if got, want := h.events(), []ledger.WalletEvent{opened, debited}; !reflect.DeepEqual(got, want) {
		t.Errorf("handled %#v, want %#v", got, want)
	}
}

// orderRecorder records an Order handler's events.
type orderRecorder struct {
	ledger.UnimplementedOrderHandler
	mu  sync.Mutex
	got []ledger.OrderEvent
}

func (r *orderRecorder) add(e ledger.OrderEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return nil
}

func (r *orderRecorder) HandleOrderPlaced(_ context.Context, e ledger.OrderPlaced) error {
	return r.add(e)
}

func (r *orderRecorder) HandleOrderPaid(_ context.Context, e ledger.OrderPaid) error {
	return r.add(e)
}

// TestEnvelopeCarriesBoxedEvents does the same with an entity whose events
// travel boxed (Order, whose events are too large together): the handler
// gets each event as published, and the state guard's skip reaches OnSkip
// as the event it was.
func TestEnvelopeCarriesBoxedEvents(t *testing.T) {
	ctx := context.Background()
	h := &orderRecorder{}
	var skips skipped
	d, err := ledger.NewOrderDispatcher(h, func(c *ledger.OrderConfig) {
		c.OnSkip = func(_ string, ev ledger.OrderEvent, _ string) { skips.add(ev) }
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	placed := ledger.OrderPlaced{OrderID: "o", Customer: "c", Total: 10, At: time.Unix(1, 0).UTC()}
	paid := ledger.OrderPaid{OrderID: "o"}
	if err := d.PublishOrderPlaced(ctx, placed); err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(ctx, &paid); err != nil {
		t.Fatal(err)
	}
	if err := d.PublishOrderPlaced(ctx, placed); err != nil { // late: the order is Paid
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	got := append([]ledger.OrderEvent(nil), h.got...)
	h.mu.Unlock()
	if want := []ledger.OrderEvent{placed, paid}; !reflect.DeepEqual(got, want) {
		t.Errorf("handled %#v, want %#v", got, want)
	}
	if got := skips.all(); !reflect.DeepEqual(got, []any{placed}) {
		t.Errorf("OnSkip told %#v, want the late %#v", got, placed)
	}
}

// blockingWallet is a Wallet handler that says when a batch started and
// waits for release before it returns.
type blockingWallet struct {
	started chan struct{}
	release chan struct{}
}

func (b blockingWallet) HandleWalletBatch(context.Context, string, []ledger.WalletEvent) error {
	b.started <- struct{}{}
	<-b.release
	return nil
}

// TestInspectorShowsTheRunningEnvelope checks the operator's view of an
// event that runs, which the engines carry in an envelope: its name, its
// fields and its version, as they were published. (The console showed no
// version once the engines carried envelopes; its browser test found it.)
func TestInspectorShowsTheRunningEnvelope(t *testing.T) {
	ctx := context.Background()
	h := blockingWallet{started: make(chan struct{}), release: make(chan struct{})}
	d, err := ledger.NewWalletDispatcher(h, func(c *ledger.WalletConfig) { c.Linger = 0 })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if err := d.PublishWalletOpened(ctx, ledger.WalletOpened{WalletID: "i", Version: 1, Owner: "ida"}); err != nil {
		t.Fatal(err)
	}
	<-h.started
	k, err := d.Inspector().Key(ctx, string(ledger.WalletFirstSubscriber), "i")
	close(h.release)
	if err != nil {
		t.Fatal(err)
	}
	r := k.Running
	if r == nil || !r.Known || r.Name != "WalletOpened" || !r.HasVersion || r.Version != 1 || !strings.Contains(string(r.Data), `"Owner":"ida"`) {
		t.Fatalf("running: %+v", r)
	}
}

// recordingTracer records the events of the attempts it is told of.
type recordingTracer struct {
	mu     sync.Mutex
	events []any
}

func (r *recordingTracer) StartAttempt(ctx context.Context, a runtime.Attempt) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, a.Event)
	return ctx
}

func (r *recordingTracer) EndAttempt(context.Context, runtime.Attempt, error) {}

func (r *recordingTracer) Retired(string, any, uint64, runtime.Outcome) {}

// linkingTracer is a recordingTracer that links messages' trace contexts.
type linkingTracer struct{ recordingTracer }

func (*linkingTracer) Link(uint64, transport.Trace) {}

func (*linkingTracer) Unlink(uint64) {}

// TestTracerSeesEventsNotEnvelopes checks that a subscriber's tracer is
// told of each attempt with the event as published (which it reads the
// event's name and version from), not the envelope the engines carry, and
// that a tracer which links transports' trace contexts still does.
func TestTracerSeesEventsNotEnvelopes(t *testing.T) {
	ctx := context.Background()
	tr := &linkingTracer{}
	d, err := ledger.NewWalletDispatcher(&walletRecorder{failAmount: -1}, func(c *ledger.WalletConfig) {
		c.Tracer = tr
		c.Linger = 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	opened := ledger.WalletOpened{WalletID: "t", Version: 1, Owner: "tom"}
	if err := d.PublishWalletOpened(ctx, opened); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	got := append([]any(nil), tr.events...)
	tr.mu.Unlock()
	if !reflect.DeepEqual(got, []any{opened}) {
		t.Errorf("the tracer saw %#v, want %#v", got, opened)
	}
	subs := d.Subscriptions()
	if len(subs) != 1 {
		t.Fatalf("%d subscriptions", len(subs))
	}
	if _, ok := subs[0].Tracer.(transport.Linker); !ok {
		t.Errorf("the subscription's tracer %T links no trace contexts", subs[0].Tracer)
	}
}
