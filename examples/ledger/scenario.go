package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

const (
	hotAccount       = "acct-hot"
	retriedAccount   = "acct-3"
	retriedVersion   = 5
	parkedAccount    = "acct-4"
	parkedVersion    = 6
	publishers       = 4
	workersInExample = 8
)

// parkedAlone returns the park of account, which must be the only key of
// d's Account subscriber parked.
func parkedAlone(ctx context.Context, d *ledger.AccountDispatcher, account string) (runtime.ParkedKey[string], error) {
	parked, err := d.ParkedKeys(ctx)
	if err != nil {
		return runtime.ParkedKey[string]{}, err
	}
	keys := parked["Account"]
	if len(keys) != 1 || keys[0].Key != account {
		return runtime.ParkedKey[string]{}, fmt.Errorf("want %s parked alone, got %+v", account, keys)
	}
	return keys[0], nil
}

// runLedger publishes interleaved account streams from several publishers,
// with one hot account, one transient and one permanent fault, and checks the
// balances against in-order application.
func runLedger(ctx context.Context, out io.Writer, cfg config, store *sqlstore.Store) error {
	rng := rand.New(rand.NewPCG(cfg.seed, 7))
	b := newBook(cfg.latency, cfg.seed)
	m := newMeter()
	defer m.close()
	d, err := ledger.NewAccountDispatcher(b, func(c *ledger.AccountConfig) {
		c.MeterProvider = m.provider // metrics through OpenTelemetry
		c.MaxActive = workersInExample
		// The publishers here are batch jobs, so a full backlog blocks them
		// (backpressure) instead of failing the publish as the schema's
		// reject policy would for a request path.
		c.Backlog.WhenFull = runtime.Block
		c.Logger = quietLogger()
		c.Store = store // versions, states and parks survive restarts
	})
	if err != nil {
		return err
	}
	defer d.Close(context.Background())

	want := map[string]int64{}
	streams := make([][][]entry, publishers) // publisher -> its accounts' streams
	total := 0
	for i := 0; i < cfg.accounts; i++ {
		account := fmt.Sprintf("acct-%d", i)
		s, balance := accountStream(rng, account, cfg.events)
		want[account] = balance
		streams[i%publishers] = append(streams[i%publishers], s)
		total += len(s)
	}
	hot, hotBalance := accountStream(rng, hotAccount, total) // as many events as all the others
	want[hotAccount] = hotBalance
	halfway := b.after(hotAccount, len(hot)/2)
	b.failTransiently(retriedAccount, retriedVersion, 2)
	b.failPermanently(parkedAccount, parkedVersion, errors.New("ledger row locked by a migration"))

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, publishers+1)
	for p := range streams {
		seq := interleave(rand.New(rand.NewPCG(cfg.seed, uint64(p))), streams[p])
		wg.Go(func() { errs <- publishAll(ctx, d, seq) })
	}
	wg.Go(func() { errs <- publishAll(ctx, d, hot) })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	select { // read the metrics while the hot account drains
	case <-halfway:
	case <-ctx.Done():
		return ctx.Err()
	}
	during, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "ledger   %d accounts + %s, %d events from %d publishers, %d keys in progress at once, handler latency %v-%v\n",
		cfg.accounts, hotAccount, total+len(hot), publishers+1, workersInExample, cfg.latency/2, cfg.latency)

	// The hot account finished last; every other account long before it.
	var coldDone time.Time
	for account := range want {
		if account != hotAccount && account != parkedAccount && b.finishedAt(account).After(coldDone) {
			coldDone = b.finishedAt(account)
		}
	}
	hotDone := b.finishedAt(hotAccount)
	fmt.Fprintf(out, "hot key  %s had %d of %d events: the other accounts were done after %v, %s after %v\n",
		hotAccount, len(hot), total+len(hot), coldDone.Sub(start).Round(time.Millisecond), hotAccount, hotDone.Sub(start).Round(time.Millisecond))
	if !coldDone.Before(hotDone) {
		return fmt.Errorf("the cold accounts finished after the hot one: the hot key stalled them")
	}
	fmt.Fprintf(out, "metrics  while %s drained (OpenTelemetry, read from the SDK):\n         %s\n", hotAccount, during)

	stats := d.Stats()["Account"]
	fmt.Fprintf(out, "retry    %s v%d failed twice (database timeout) and was applied on attempt %d; its later events waited; %d retries in all\n",
		retriedAccount, retriedVersion, b.attempts(retriedAccount, retriedVersion), stats.Retried)

	pk, err := parkedAlone(ctx, d, parkedAccount)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "park     %s v%d failed permanently: the key parked with %d events (%s)\n",
		parkedAccount, parkedVersion, pk.Events, pk.Reason)
	b.fix(parkedAccount)
	if err := d.Replay(ctx, parkedAccount); err != nil {
		return err
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "         fault fixed, replayed: balance %d, in-order application gives %d\n",
		b.balance(parkedAccount), want[parkedAccount])

	mismatches := 0
	for account, balance := range want {
		if b.balance(account) != balance {
			mismatches++
		}
	}
	fmt.Fprintf(out, "balances %d of %d accounts equal in-order application\n", len(want)-mismatches, len(want))
	if mismatches > 0 {
		return fmt.Errorf("%d balances differ from in-order application", mismatches)
	}
	stats = d.Stats()["Account"]
	fmt.Fprintf(out, "stats    accepted %d, handled %d, retried %d, parked now %d, replayed %d\n",
		stats.Accepted, stats.Handled, stats.Retried, stats.Parked, stats.Replayed)
	after, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "metrics  at the end:\n         %s\n", after)
	return nil
}

func publishAll(ctx context.Context, p ledger.AccountPublisher, seq []entry) error {
	for _, e := range seq {
		if err := publish(ctx, p, e); err != nil {
			return err
		}
	}
	return nil
}

// shipments is the example's OrderHandler: it records each order's status.
type shipments struct {
	mu     sync.Mutex
	status map[string]string
}

func (s *shipments) set(id, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[id] = status
	return nil
}

func (s *shipments) HandleOrderPlaced(_ context.Context, e ledger.OrderPlaced) error {
	return s.set(e.OrderID, "Placed")
}
func (s *shipments) HandleOrderPaid(_ context.Context, e ledger.OrderPaid) error {
	return s.set(e.OrderID, "Paid")
}
func (s *shipments) HandleOrderShipped(_ context.Context, e ledger.OrderShipped) error {
	return s.set(e.OrderID, "Shipped")
}
func (s *shipments) HandleOrderTracked(_ context.Context, e ledger.OrderTracked) error {
	return s.set(e.OrderID, "Shipped, at "+e.Location)
}
func (s *shipments) HandleOrderDelivered(_ context.Context, e ledger.OrderDelivered) error {
	return s.set(e.OrderID, "Delivered")
}
func (s *shipments) HandleOrderCancelled(_ context.Context, e ledger.OrderCancelled) error {
	return s.set(e.OrderID, "Cancelled")
}

// runOrders sends one order's transitions with a late payment and a late
// cancellation, which the forward-only state guard skips.
func runOrders(ctx context.Context, out io.Writer, store *sqlstore.Store) error {
	s := &shipments{status: map[string]string{}}
	d, err := ledger.NewOrderDispatcher(s, func(c *ledger.OrderConfig) {
		c.Logger = quietLogger()
		c.Store = store
	})
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	id := "order-1"
	steps := []func() error{
		func() error {
			return d.PublishOrderPlaced(ctx, ledger.OrderPlaced{OrderID: id, Customer: "ada", Total: 4200, At: time.Now()})
		},
		func() error { return d.PublishOrderPaid(ctx, ledger.OrderPaid{OrderID: id}) },
		func() error {
			return d.PublishOrderShipped(ctx, ledger.OrderShipped{OrderID: id, Carrier: "post", Label: []byte("L-1")})
		},
		func() error { return d.PublishOrderPaid(ctx, ledger.OrderPaid{OrderID: id}) }, // a late redelivery
		func() error {
			return d.PublishOrderCancelled(ctx, ledger.OrderCancelled{OrderID: id, Reason: "too late"})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	stats := d.Stats()["Order"]
	fmt.Fprintf(out, "orders   %s: Placed, Paid, Shipped, then a late Paid and a Cancelled (not allowed after Shipped): status %s, %d skipped by the state guard\n",
		id, s.status[id], stats.Skipped)
	if s.status[id] != "Shipped" || stats.Skipped != 2 {
		return fmt.Errorf("the state guard let a late transition through")
	}
	return nil
}

// positions is the example's RiderHandler: it keeps the last position.
type positions struct {
	mu      sync.Mutex
	handled int
	last    map[string]ledger.LocationUpdated
}

func (p *positions) HandleLocationUpdated(_ context.Context, e ledger.LocationUpdated) error {
	time.Sleep(200 * time.Microsecond) // a slow map update: positions pile up meanwhile
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled++
	p.last[e.RiderID] = e
	return nil
}

// runRiders floods location updates; conflation keeps only the newest
// pending one per rider, and the last one always arrives.
func runRiders(ctx context.Context, out io.Writer, store *sqlstore.Store) error {
	p := &positions{last: map[string]ledger.LocationUpdated{}}
	d, err := ledger.NewRiderDispatcher(p, func(c *ledger.RiderConfig) {
		c.Logger = quietLogger()
		c.Store = store
	})
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	const riders, updates = 5, 200
	for i := 0; i < updates; i++ {
		for r := 0; r < riders; r++ {
			e := ledger.LocationUpdated{RiderID: fmt.Sprintf("rider-%d", r), Lat: float64(i), Lng: float64(r), At: time.Now()}
			if err := d.PublishLocationUpdated(ctx, e); err != nil {
				return err
			}
		}
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	stats := d.Stats()["Rider"]
	fmt.Fprintf(out, "riders   %d location updates for %d riders: %d handled, %d conflated, every rider ends at its newest position\n",
		riders*updates, riders, stats.Handled, stats.Conflated)
	for r := 0; r < riders; r++ {
		if p.last[fmt.Sprintf("rider-%d", r)].Lat != updates-1 {
			return fmt.Errorf("rider-%d did not end at its newest position", r)
		}
	}
	return nil
}
