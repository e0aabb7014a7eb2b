// Command screenshot makes the console's screenshots in docs/: the
// operator's console (runtime/console) over the ledger example's
// dispatchers (examples/gen), fed by Kafka (an in-process kfake cluster),
// with the relay of a transactional outbox beside it, after half a minute
// of traffic in phases of varying load (which the last-hour charts show),
// with parked, stuck and busy keys: the overview photographed in headless
// Chromium at a desktop's width and at a phone's, and the stuck key's page.
// Run it from the browsertest folder:
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
	desktop := flag.String("out", "../docs/console.png", "the desktop screenshot of the overview (PNG)")
	phone := flag.String("phone", "../docs/console-phone.png", "the phone screenshot (PNG); empty for none")
	key := flag.String("key", "../docs/console-key.png", "the screenshot of a stuck key's page (PNG); empty for none")
	phases := flag.Int("phases", 12, "how many phases of traffic the charts show (each lasts -phase)")
	phase := flag.Duration("phase", 2500*time.Millisecond, "how long a phase of traffic lasts")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, shots{*desktop, *phone, *key}, *phases, *phase); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

// shots are the screenshots' paths; an empty one is not made.
type shots struct{ desktop, phone, key string }

const (
	topic       = "ledger.accounts"
	deadLetters = "ledger.accounts.dlt"
	partitions  = 4
	// stuckAfter is the console's StuckAfter: the slow account passes it
	// before the picture is taken.
	stuckAfter = 2 * time.Second
	// slow is the account whose handler is slow: it is stuck, its backlog
	// fills its share and its partition pauses.
	slow = "acct-0815"
)

func run(ctx context.Context, out shots, phases int, phase time.Duration) error {
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
	release := make(chan struct{})
	defer close(release)
	bank.Slow(slow, release)
	accountOpts := func(c *ledger.AccountConfig) {
		c.OnOutcome = consumer.OnOutcome
		c.Retry = runtime.Retry{Attempts: 5, Initial: time.Millisecond, Max: 4 * time.Millisecond}
		c.MaxActive = 64
		// Small enough that the slow account fills its share and its
		// partition pauses, as the picture should show.
		c.Backlog.PerKey = 24
		// Long enough that the slow account's first attempt still runs
		// when its page is photographed.
		c.Timeout = time.Hour
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

	// The transactional outbox of a service that writes accounts: one key
	// the broker refuses, parked in the outbox.
	dir, err := os.MkdirTemp("", "ordergen-screenshot-outbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ob, err := browsertest.NewOutbox(ctx, dir)
	if err != nil {
		return err
	}
	defer ob.Close()
	ob.Break("acct-7310", true)
	for _, account := range []string{"acct-7300", "acct-7310"} {
		if err := ob.Write(ctx, account, 4); err != nil {
			return err
		}
	}
	if err := ob.Ship(ctx); err != nil {
		return err
	}

	consumed := make(chan error, 1)
	runCtx, stopConsumer := context.WithCancel(ctx)
	go func() { consumed <- consumer.Run(runCtx, accounts) }()
	defer func() {
		stopConsumer()
		<-consumed
	}()

	c, err := console.New(console.Config{
		Inspectors: []inspect.Inspector{accounts.Inspector(), orders.Inspector()},
		Transports: []inspect.Transport{consumer, ob.Relay},
		Authorize:  func(*http.Request, console.Action) (string, error) { return "alice", nil },
		Logger:     quiet,
		Title:      "ledger",
		StuckAfter: stuckAfter,
		// Samples often enough that the charts show the phases below.
		Sample: phase / 5,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", c))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if err := traffic(ctx, cluster, bank, orders, srv.URL+"/ops/", phases, phase); err != nil {
		return err
	}
	for _, s := range []struct {
		path, page string
		width      int
		mobile     bool
		wait       string
	}{
		{out.desktop, "", 1280, false, "figure.chart"},
		{out.phone, "", 390, true, "figure.chart"},
		{out.key, "key?entity=Account&subscriber=Account&key=" + slow, 1280, false, "section.running"},
	} {
		if s.path == "" {
			continue
		}
		if err := shoot(ctx, chromium, srv.URL+"/ops/"+s.page, s.path, s.width, s.mobile, s.wait); err != nil {
			return err
		}
	}
	return nil
}

// traffic publishes the accounts' events to Kafka, and handles orders, in
// phases of varying load: the charts show them. Accounts break on the way
// (one fails for an audit, one is refused an overdraft, one times out, and
// an operator fixes that one and replays it), the slow account falls
// behind, and the audit subscriber fails one account.
func traffic(ctx context.Context, cluster *kfake.Cluster, bank *browsertest.Bank, orders *ledger.OrderDispatcher, console string, phases int, phase time.Duration) error {
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
	opened := time.Date(2026, 11, 2, 8, 30, 0, 0, time.UTC)
	versions := map[string]uint64{}
	// publish sends account's next n events (its opening first).
	publish := func(account string, n int) error {
		for range n {
			v := versions[account] + 1
			var err error
			switch {
			case v == 1:
				err = producer.PublishAccountOpened(ctx, ledger.AccountOpened{AccountID: account, Version: 1, Owner: "Ada Lovelace", OpenedAt: opened})
			case v%3 == 0:
				amount := int64(2500)
				if account == "acct-2210" {
					amount = 125000
				}
				err = producer.PublishWithdrew(ctx, ledger.Withdrew{AccountID: account, Version: v, Amount: amount})
			default:
				err = producer.PublishDeposited(ctx, ledger.Deposited{AccountID: account, Version: v, Amount: int64(1000 * v)})
			}
			if err != nil {
				return err
			}
			versions[account] = v
		}
		return nil
	}
	load := []int{40, 90, 160, 230, 180, 110, 260, 210, 90, 60, 150, 100}
	order := 5000
	for p := range phases {
		start := time.Now()
		switch p {
		case 2:
			bank.BreakWith("acct-1042", errors.New("core banking: account acct-1042 is locked for an audit"))
			if err := publish("acct-1042", 6); err != nil {
				return err
			}
		case 4:
			bank.BreakWith("acct-2210", runtime.Permanent(errors.New("ledger: overdraft limit of 500.00 EUR exceeded by a withdrawal of 1,250.00 EUR")))
			if err := publish("acct-2210", 6); err != nil {
				return err
			}
		case 5:
			bank.BreakWith("acct-3001", errors.New("core banking: timeout after 5s"))
			if err := publish("acct-3001", 6); err != nil {
				return err
			}
		case 8:
			// An operator fixed acct-3001's fault and replayed it from the
			// console.
			bank.BreakWith("acct-3001", nil)
			res, err := http.PostForm(console+"api/replay", url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {"acct-3001"}})
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("replay acct-3001: %s", res.Status)
			}
		}
		// The slow account falls further behind every phase.
		if err := publish(slow, 4); err != nil {
			return err
		}
		// The phase's load, spread over it in five slices.
		n := load[p%len(load)]
		for slice := range 5 {
			for i := slice * n / 5; i < (slice+1)*n/5; i++ {
				if err := publish(fmt.Sprintf("acct-%04d", 4000+7*(i%60)), 1); err != nil {
					return err
				}
			}
			for range n / 20 {
				id := fmt.Sprintf("ord-%04d", order)
				order++
				if err := orders.PublishOrderPlaced(ctx, ledger.OrderPlaced{OrderID: id, Customer: "Grace Hopper", Total: 4200, At: opened}); err != nil {
					return err
				}
				if err := orders.PublishOrderPaid(ctx, ledger.OrderPaid{OrderID: id}); err != nil {
					return err
				}
			}
			select {
			case <-time.After(start.Add(time.Duration(slice+1) * phase / 5).Sub(time.Now())): // a picture's pace, not a synchronisation
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// shoot photographs the page at url, width pixels wide, into path: the
// whole page, or, when mobile, a phone's first screen (width CSS pixels at
// twice the density).
func shoot(ctx context.Context, chromium, url, path string, width int, mobile bool, wait string) error {
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
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(wait))}
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
