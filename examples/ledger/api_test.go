package main

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

// The generated API beside publishing: typed states, a key's version and
// state per subscriber, the Unimplemented handler bases, and the backlog
// questions an operator asks (TopBacklog, Stuck).

// openings is the handler of the tests below: it implements the opening
// and deposits of an account and, through the embedded base, nothing else.
type openings struct {
	ledger.UnimplementedAccountHandler
	deposits  int
	failFirst bool // refuse the opening for good
}

func (o *openings) HandleAccountOpened(context.Context, ledger.AccountOpened) error {
	if o.failFirst {
		return runtime.Permanent(errRefused)
	}
	return nil
}

func (o *openings) HandleDeposited(context.Context, ledger.Deposited) error {
	o.deposits++
	return nil
}

func publishFlushed(t *testing.T, d *ledger.AccountDispatcher, events ...ledger.AccountEvent) {
	t.Helper()
	ctx := context.Background()
	for _, e := range events {
		if err := d.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// wantVersionAndState checks what the subscriber's guards stored for key.
func wantVersionAndState(t *testing.T, d *ledger.AccountDispatcher, subscriber ledger.AccountSubscriberName, key string, version uint64, state ledger.AccountState) {
	t.Helper()
	ctx := context.Background()
	if v, err := d.Version(ctx, subscriber, key); err != nil || v != version {
		t.Errorf("Version(%s, %s) = %d, %v; want %d", subscriber, key, v, err, version)
	}
	if s, err := d.State(ctx, subscriber, key); err != nil || s != state {
		t.Errorf("State(%s, %s) = %q, %v; want %q", subscriber, key, s, err, state)
	}
}

func TestTypedStates(t *testing.T) {
	for _, tc := range []struct {
		state stringer
		want  string
	}{{ledger.AccountStateOpen, "Open"}, {ledger.AccountStateClosed, "Closed"}, {ledger.OrderStateCancelled, "Cancelled"}, {ledger.AccountState(""), ""}} {
		if got := tc.state.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.state, got, tc.want)
		}
	}
}

// unimplementedReason is the skip reason of an event a handler does not
// implement, as the metrics record it.
const unimplementedReason = "unimplemented"

// stringer is what the typed states have in common.
type stringer interface{ String() string }

// TestVersionAndStatePerSubscriber: each subscriber answers for its own
// guards; a subscriber whose opening parked stays behind.
func TestVersionAndStatePerSubscriber(t *testing.T) {
	ctx := context.Background()
	d, err := ledger.NewAccountDispatcher(&openings{}, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if err := d.Subscribe("audit", &openings{failFirst: true}, func(c *ledger.AccountConfig) { c.Logger = quietLogger() }); err != nil {
		t.Fatal(err)
	}
	publishFlushed(t, d,
		ledger.AccountOpened{AccountID: "a", Version: 1, Owner: "ada"},
		ledger.Deposited{AccountID: "a", Version: 2, Amount: 5},
		ledger.AccountFrozen{AccountID: "a", Version: 3, Reason: "audit"},
	)
	wantVersionAndState(t, d, ledger.AccountFirstSubscriber, "a", 3, ledger.AccountStateFrozen)
	wantVersionAndState(t, d, ledger.AccountSubscriberNamed("audit"), "a", 0, "") // the opening parked, and the key with it
	if v, err := d.Version(ctx, ledger.AccountFirstSubscriber, "never-seen"); err != nil || v != 0 {
		t.Errorf("the version of a key never seen: %d, %v; want 0", v, err)
	}
	// A name that is no subscriber's (a literal converts to the type) is an
	// error that names the one meant, or all of them.
	if _, err := d.Version(ctx, "account", "a"); err == nil || err.Error() != `ledger: no subscriber named "account" (did you mean Account?)` {
		t.Errorf("Version of a subscriber misspelt in case: %v", err)
	}
	if _, err := d.State(ctx, ledger.AccountSubscriberNamed("nobody"), "a"); err == nil || err.Error() != `ledger: no subscriber named "Account/nobody" (subscribers: Account, Account/audit)` {
		t.Errorf("State of an unknown subscriber: %v", err)
	}
	if _, err := d.ParkedEvents(ctx, "Account/Audit", "a"); err == nil || err.Error() != `ledger: no subscriber named "Account/Audit" (did you mean Account/audit?)` {
		t.Errorf("ParkedEvents of a subscriber misspelt in case: %v", err)
	}
	if st := d.Stats(); st[ledger.AccountFirstSubscriber].Accepted != 3 || st[ledger.AccountSubscriberNamed("audit")].Parked != 3 {
		t.Errorf("Stats by subscriber: %+v", st)
	}
}

// TestVersionAndStateOfTxSubscriber: a transactional subscriber's version
// and state are read from the durable store it commits them to.
func TestVersionAndStateOfTxSubscriber(t *testing.T) {
	ctx := t.Context()
	store := openTestStore(t)
	d, err := ledger.NewAccountTxDispatcher(store, txOpenings{}, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	publishFlushed(t, d,
		ledger.AccountOpened{AccountID: "a", Version: 1},
		ledger.Withdrew{AccountID: "a", Version: 2, Amount: 1}, // unimplemented
		ledger.AccountClosed{AccountID: "a", Version: 3},       // unimplemented, moves to Closed
	)
	wantVersionAndState(t, d, ledger.AccountFirstSubscriber, "a", 3, ledger.AccountStateClosed)
	if st := d.Stats()["Account"]; st.Handled != 1 || st.Skipped != 2 {
		t.Errorf("handled %d, skipped %d; want 1 and 2", st.Handled, st.Skipped)
	}
}

// txOpenings implements only the opening of an account, in a transaction.
type txOpenings struct {
	ledger.UnimplementedAccountTxHandler
}

func (txOpenings) HandleAccountOpened(context.Context, *sql.Tx, ledger.AccountOpened) error {
	return nil
}

// TestUnimplementedBaseAdvancesTheGuards: events the handler does not
// implement still use up their versions and move the state, so the next
// implemented event is applied (no gap), and they are counted as skipped
// with the reason "unimplemented".
func TestUnimplementedBaseAdvancesTheGuards(t *testing.T) {
	ctx := context.Background()
	mp := metricstest.New()
	h := &openings{}
	d, err := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) {
		c.Logger = quietLogger()
		c.MeterProvider = mp
		c.MaxHold = time.Hour // a held event would stay held, not park
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	publishFlushed(t, d,
		ledger.AccountOpened{AccountID: "a", Version: 1},
		ledger.Withdrew{AccountID: "a", Version: 2, Amount: 1},   // unimplemented
		ledger.Deposited{AccountID: "a", Version: 3, Amount: 5},  // applied: version 2 was used up
		ledger.AccountFrozen{AccountID: "a", Version: 4},         // unimplemented, moves to Frozen
		ledger.AccountOpened{AccountID: "a", Version: 5},         // late transition: skipped by the state guard
		ledger.Deposited{AccountID: "a", Version: 6, Amount: 5},  // applied
		ledger.Withdrew{AccountID: "a", Version: 6, Amount: 100}, // a duplicate version: skipped by the version guard
	)
	if h.deposits != 2 {
		t.Errorf("%d deposits handled, want 2", h.deposits)
	}
	st := d.Stats()["Account"]
	if st.Handled != 3 || st.Skipped != 4 || st.Held != 0 {
		t.Errorf("handled %d, skipped %d, held %d; want 3, 4 and 0", st.Handled, st.Skipped, st.Held)
	}
	wantVersionAndState(t, d, "Account", "a", 6, ledger.AccountStateFrozen)
	m := mp.Collect()
	reason := meter.Attribute{Key: meter.AttrSkipReason, Value: unimplementedReason}
	if n, _ := m.Sum(meter.MetricEvents, reason); n != 2 {
		t.Errorf("events skipped as %q: %v, want 2", unimplementedReason, n)
	}
	if !errors.Is(ledger.UnimplementedAccountHandler{}.HandleAccountClosed(ctx, ledger.AccountClosed{}), runtime.ErrUnimplemented) {
		t.Error("the base does not return runtime.ErrUnimplemented")
	}
}

// TestUnimplementedWithoutGuards: an entity without version and states
// (Rider) skips what its handler does not implement, with the reason.
func TestUnimplementedWithoutGuards(t *testing.T) {
	ctx := context.Background()
	mp := metricstest.New()
	d, err := ledger.NewRiderDispatcher(ledger.UnimplementedRiderHandler{}, func(c *ledger.RiderConfig) {
		c.Logger = quietLogger()
		c.MeterProvider = mp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if err := d.PublishLocationUpdated(ctx, ledger.LocationUpdated{RiderID: "r", Lat: 1, Lng: 2}); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats()["Rider"]; st.Skipped != 1 || st.Handled != 0 || st.Dropped != 0 {
		t.Errorf("skipped %d, handled %d, dropped %d; want 1, 0, 0", st.Skipped, st.Handled, st.Dropped)
	}
	reason := meter.Attribute{Key: meter.AttrSkipReason, Value: unimplementedReason}
	if n, _ := mp.Collect().Sum(meter.MetricEvents, reason); n != 1 {
		t.Errorf("events skipped as unimplemented: %v, want 1", n)
	}
}

// blockingDeposits holds every deposit until release is closed.
type blockingDeposits struct {
	ledger.UnimplementedAccountHandler
	started chan struct{}
	release chan struct{}
}

func (b *blockingDeposits) HandleDeposited(context.Context, ledger.Deposited) error {
	select {
	case b.started <- struct{}{}:
	default:
	}
	<-b.release
	return nil
}

// TestTopBacklogAndStuck: the dispatcher reports, per subscriber, the keys
// with the largest backlog and those whose oldest event waits too long.
func TestTopBacklogAndStuck(t *testing.T) {
	ctx := context.Background()
	h := &blockingDeposits{started: make(chan struct{}, 1), release: make(chan struct{})}
	d, err := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) {
		c.Logger = quietLogger()
		c.MaxActive = 1
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	for v := uint64(1); v <= 3; v++ {
		if err := d.PublishDeposited(ctx, ledger.Deposited{AccountID: "slow", Version: v, Amount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	<-h.started
	top := d.TopBacklog(5)["Account"]
	if len(top) != 1 || top[0].Key != "slow" || top[0].Pending != 3 {
		t.Errorf("TopBacklog = %+v, want slow with 3 pending", d.TopBacklog(5))
	}
	if stuck := d.Stuck(0)["Account"]; len(stuck) != 1 || stuck[0].Key != "slow" {
		t.Errorf("Stuck(0) = %+v, want slow", d.Stuck(0))
	}
	if stuck := d.Stuck(time.Hour); len(stuck) != 0 {
		t.Errorf("Stuck(1h) = %+v, want nothing: no event is that old", stuck)
	}
	close(h.release)
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if top := d.TopBacklog(5); len(top) != 0 {
		t.Errorf("TopBacklog after draining = %+v, want nothing", top)
	}
}

// A nil handler is refused with an error that says so, by every
// constructor and Subscribe, plain and transactional: the generated adapter
// gives the guards nothing to call (genimpl.Adapt) rather than a handler
// that would panic on the first event.
func TestNilHandlerIsRefused(t *testing.T) {
	var h ledger.AccountHandler
	var tx ledger.AccountTxHandler
	if _, err := ledger.NewAccountDispatcher(h); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Errorf("NewAccountDispatcher(nil) = %v; want a nil handler error", err)
	}
	store := openTestStore(t)
	if _, err := ledger.NewAccountTxDispatcher(store, tx); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Errorf("NewAccountTxDispatcher(store, nil) = %v; want a nil handler error", err)
	}
	d, err := ledger.NewAccountDispatcher(&openings{}, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	if err := d.Subscribe("audit", h); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Errorf("Subscribe(audit, nil) = %v; want a nil handler error", err)
	}
	if err := d.SubscribeTx("books", store, tx); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Errorf("SubscribeTx(books, store, nil) = %v; want a nil handler error", err)
	}
}
