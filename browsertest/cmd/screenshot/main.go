// Command screenshot makes the console's screenshots in docs/: the
// operator's console (runtime/console) over the ledger example's
// dispatchers (examples/gen), fed by Kafka (an in-process kfake cluster),
// with parked, stuck and busy keys, photographed in headless Chromium at a
// desktop's width and at a phone's. Run it from the browsertest folder:
//
//	go run ./cmd/screenshot
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/browsertest"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/kafka"
)

func main() {
	desktop := flag.String("out", "../docs/console.png", "the desktop screenshot (PNG)")
	phone := flag.String("phone", "../docs/console-phone.png", "the phone screenshot (PNG); empty for none")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *desktop, *phone); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

const (
	topic       = "ledger.accounts"
	deadLetters = "ledger.accounts.dlt"
	partitions  = 4
	// stuckAfter is the console's StuckAfter: the slow account passes it
	// before the picture is taken.
	stuckAfter = 2 * time.Second
)

func run(ctx context.Context, desktop, phone string) error {
	chromium := browsertest.Chromium()
	if chromium == "" {
		return errors.New("no Chromium found: apt-get install chromium, or set ORDERGEN_CHROMIUM")
	}
	quiet := slog.New(slog.DiscardHandler)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic), kfake.SeedTopics(1, deadLetters))
	if err != nil {
		return err
	}
	defer cluster.Close()
	consumer, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts:      []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.FetchMaxWait(50 * time.Millisecond)},
		Group:           "ledger",
		Topics:          []string{topic},
		Codec:           ledger.AccountCodec{},
		DeadLetterTopic: deadLetters,
		CommitInterval:  100 * time.Millisecond,
		Logger:          quiet,
	})
	if err != nil {
		return err
	}

	bank := browsertest.NewBank()
	bank.BreakWith("acct-1042", errors.New("core banking: account acct-1042 is locked for an audit"))
	bank.BreakWith("acct-2210", runtime.Permanent(errors.New("ledger: overdraft limit of 500.00 EUR exceeded by a withdrawal of 1,250.00 EUR")))
	bank.BreakWith("acct-3001", errors.New("core banking: timeout after 5s"))
	release := make(chan struct{})
	defer close(release)
	bank.Slow("acct-0815", release)
	accountOpts := func(c *ledger.AccountConfig) {
		c.OnOutcome = consumer.OnOutcome
		c.Retry = runtime.Retry{Attempts: 5, Initial: time.Millisecond, Max: 4 * time.Millisecond}
		c.MaxActive = 64
		// Small enough that the slow account fills its share and its
		// partition pauses, as the picture should show.
		c.Backlog.PerKey = 24
		c.Logger = quiet
	}
	accounts, err := ledger.NewAccountDispatcher(bank, accountOpts)
	if err != nil {
		return err
	}
	defer accounts.Close(context.Background())
	if err := accounts.Subscribe("audit", audit{}, accountOpts); err != nil {
		return err
	}
	orders, err := ledger.NewOrderDispatcher(shop{}, func(c *ledger.OrderConfig) { c.Logger = quiet })
	if err != nil {
		return err
	}
	defer orders.Close(context.Background())

	consumed := make(chan error, 1)
	runCtx, stopConsumer := context.WithCancel(ctx)
	go func() { consumed <- consumer.Run(runCtx, accounts) }()
	defer func() {
		stopConsumer()
		<-consumed
	}()

	c, err := console.New(console.Config{
		Inspectors: []inspect.Inspector{accounts.Inspector(), orders.Inspector()},
		Transports: []inspect.Transport{consumer},
		Authorize:  func(*http.Request, console.Action) (string, error) { return "alice", nil },
		Logger:     quiet,
		Title:      "ledger",
		StuckAfter: stuckAfter,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", c))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if err := traffic(ctx, cluster, orders); err != nil {
		return err
	}
	if err := settle(ctx, accounts); err != nil {
		return err
	}
	// An operator fixed acct-3001's fault and replayed it from the console.
	bank.BreakWith("acct-3001", nil)
	res, err := http.PostForm(srv.URL+"/ops/api/replay", url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {"acct-3001"}})
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("replay acct-3001: %s", res.Status)
	}
	// The slow account's oldest event passes StuckAfter.
	select {
	case <-time.After(stuckAfter + 500*time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := shoot(ctx, chromium, srv.URL+"/ops/", desktop, 1280, false); err != nil {
		return err
	}
	if phone != "" {
		return shoot(ctx, chromium, srv.URL+"/ops/", phone, 390, true)
	}
	return nil
}

// traffic publishes the accounts' events to Kafka and handles some orders.
func traffic(ctx context.Context, cluster *kfake.Cluster, orders *ledger.OrderDispatcher) error {
	pcl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer pcl.Close()
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: pcl, Topic: topic, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}
	ids := []string{"acct-1042", "acct-2210", "acct-3001", "acct-0815"}
	for i := range 60 {
		ids = append(ids, fmt.Sprintf("acct-%04d", 4000+i*7))
	}
	opened := time.Date(2026, 11, 2, 8, 30, 0, 0, time.UTC)
	for _, id := range ids {
		n := 6
		if id == "acct-0815" {
			n = 40 // a busy account, and its handler is slow
		}
		if err := producer.PublishAccountOpened(ctx, ledger.AccountOpened{AccountID: id, Version: 1, Owner: "Ada Lovelace", OpenedAt: opened}); err != nil {
			return err
		}
		for v := uint64(2); v <= uint64(n); v++ {
			var err error
			if v%3 == 0 {
				amount := int64(2500)
				if id == "acct-2210" {
					amount = 125000
				}
				err = producer.PublishWithdrew(ctx, ledger.Withdrew{AccountID: id, Version: v, Amount: amount})
			} else {
				err = producer.PublishDeposited(ctx, ledger.Deposited{AccountID: id, Version: v, Amount: int64(1000 * v)})
			}
			if err != nil {
				return err
			}
		}
	}
	for i := range 120 {
		id := fmt.Sprintf("ord-%04d", 5000+i)
		if err := orders.PublishOrderPlaced(ctx, ledger.OrderPlaced{OrderID: id, Customer: "Grace Hopper", Total: 4200, At: opened}); err != nil {
			return err
		}
		if err := orders.PublishOrderPaid(ctx, ledger.OrderPaid{OrderID: id}); err != nil {
			return err
		}
	}
	return orders.Flush(ctx)
}

// settle waits until the accounts' subscribers have parked what they park
// and their counters stand still: everything but the slow account's events
// (and the records of partitions paused behind parked ones) is handled.
func settle(ctx context.Context, accounts *ledger.AccountDispatcher) error {
	var last map[ledger.AccountSubscriberName]runtime.Stats
	still := 0
	for {
		stats := accounts.Stats()
		if stats[ledger.AccountFirstSubscriber].ParkedKeys == 3 && stats[ledger.AccountSubscriberNamed("audit")].ParkedKeys == 1 && fmt.Sprint(stats) == fmt.Sprint(last) {
			if still++; still == 10 {
				return nil
			}
		} else {
			still = 0
		}
		last = stats
		select {
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("the scene did not settle: %+v: %w", stats, ctx.Err())
		}
	}
}

// shoot photographs the page at url, width pixels wide, into path: the
// whole page, or, when mobile, a phone's first screen (width CSS pixels at
// twice the density).
func shoot(ctx context.Context, chromium, url, path string, width int, mobile bool) error {
	profile, err := os.MkdirTemp("", "ordergen-screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	bctx, stop := browsertest.NewBrowser(chromium, profile, width, 900)
	defer stop()
	if err := chromedp.Do(bctx); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("table.parked"))}
	if mobile {
		steps = append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(int64(width), 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)}, steps...)
	}
	if err := chromedp.Do(sctx, steps...); err != nil {
		return err
	}
	// The desktop's whole page; the phone's first screen.
	shot := chromedp.FullScreenshot(100)
	if mobile {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(sctx, shot)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d KiB)\n", strings.TrimPrefix(path, "../"), len(png)/1024)
	return nil
}

// audit is the Account subscriber named audit: it copies deposits and
// withdrawals to an audit store, which acct-0007's... fails for acct-1042's
// neighbour in the picture.
type audit struct {
	ledger.UnimplementedAccountHandler
}

func (audit) HandleDeposited(_ context.Context, e ledger.Deposited) error {
	if e.AccountID == "acct-4035" {
		return errors.New("audit store: dial tcp 10.0.3.12:5432: connect: connection refused")
	}
	return nil
}

func (audit) HandleWithdrew(context.Context, ledger.Withdrew) error { return nil }

// shop handles orders.
type shop struct {
	ledger.UnimplementedOrderHandler
}

func (shop) HandleOrderPlaced(context.Context, ledger.OrderPlaced) error { return nil }
func (shop) HandleOrderPaid(context.Context, ledger.OrderPaid) error     { return nil }
