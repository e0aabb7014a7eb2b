package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

const (
	topic       = "ledger.accounts"
	deadLetters = "ledger.accounts.dlt"
	group       = "ledger"
	partitions  = 12
)

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg config) error {
	start := time.Now()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic), kfake.SeedTopics(1, deadLetters))
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	defer cluster.Close()
	accounts := stream(cfg)
	total := cfg.accounts * cfg.events
	b := newBook(total)
	versions := runtime.NewMemoryVersionStore[string]()
	states := runtime.NewMemoryStateStore[string]()

	a, err := startProcess(cluster, "a", b, cfg.slow, versions, states)
	if err != nil {
		return err
	}
	c, err := startProcess(cluster, "b", b, cfg.slow, versions, states)
	if err != nil {
		a.kill()
		return err
	}
	if _, err := cluster.WaitGroupStable(ctx, group, 2); err != nil {
		a.kill()
		c.kill()
		return fmt.Errorf("wait for the group: %w", err)
	}

	pcl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer pcl.Close()
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](pcl, topic, ledger.AccountCodec{})
	if err != nil {
		return err
	}
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}

	// A record that does not decode: it goes to the dead-letter topic and its
	// partition goes on.
	bad := &kgo.Record{Topic: topic, Key: []byte("acct-000"), Value: []byte("{not json"),
		Headers: []kgo.RecordHeader{{Key: kafka.HeaderType, Value: []byte("Deposited")}}}
	if err := pcl.ProduceSync(ctx, bad).FirstErr(); err != nil {
		return err
	}
	published := make(chan error, 1)
	go func() { published <- publish(ctx, producer, accounts) }()
	select {
	case <-b.after(total / 3):
	case <-ctx.Done():
		return ctx.Err()
	}
	inflight := a.consumer.Stats().InFlight
	abandoned := a.kill()
	_, appliedAtKill, _ := b.snapshot()
	if err := <-published; err != nil {
		return err
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		_, applied, _ := b.snapshot()
		return fmt.Errorf("only %d of %d events applied: %w", applied, total, ctx.Err())
	}
	if err := c.stop(ctx); err != nil {
		return err
	}

	balances, applied, by := b.snapshot()
	want := inOrder(accounts)
	equal, complete := 0, 0
	for id, w := range want {
		if balances[id] == w {
			equal++
		}
		if v, _ := versions.Version(ctx, id); v == uint64(cfg.events) {
			complete++
		}
	}
	as, cs := a.consumer.Stats(), c.consumer.Stats()
	skipped := c.dispatcher.Stats()["Account"].Skipped + a.dispatcher.Stats()["Account"].Skipped
	fmt.Fprintln(out, "ordergen kafka example: the ledger schema across two consumer processes (in-process kfake cluster)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, published by AccountProducer to %s (%d partitions), keyed by AccountID\n", cfg.accounts, total, topic, partitions)
	fmt.Fprintf(out, "consumers  a and b in group %s, 64 keys in progress each, committing every 100ms\n", group)
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d records in flight, %d accepted events abandoned\n", appliedAtKill, total, inflight, abandoned)
	fmt.Fprintf(out, "rebalance  b took over a's partitions from a's last commit: %d offsets skipped by the commit metadata,\n", cs.SkippedFinished)
	fmt.Fprintf(out, "           %d re-delivered events (finished by a after its last commit) skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d\n", by["a"], by["b"])
	fmt.Fprintf(out, "dead letter 1 undecodable record sent to %s (%d write(s): at least once); its partition kept flowing\n", deadLetters, as.DeadLettered+cs.DeadLettered)
	fmt.Fprintf(out, "balances   %d of %d accounts equal in-order application; %d at their last version; %d events applied once each\n", equal, len(want), complete, applied)
	ok := equal == len(want) && complete == len(want) && applied == total && as.DeadLettered+cs.DeadLettered >= 1
	verdict := "OK: nothing lost, nothing applied twice"
	if !ok {
		verdict = "FAILED"
	}
	fmt.Fprintf(out, "verdict    %s (%v)\n", verdict, time.Since(start).Round(10*time.Millisecond))
	if !ok {
		return fmt.Errorf("the balances do not equal in-order application")
	}
	return nil
}

// publish sends every account's events, in order per account, from several
// goroutines.
func publish(ctx context.Context, p ledger.AccountPublisher, accounts [][]ledger.AccountEvent) error {
	const publishers = 8
	errs := make([]error, publishers)
	var wg sync.WaitGroup
	for w := range publishers {
		wg.Go(func() {
			for a := w; a < len(accounts); a += publishers {
				for _, e := range accounts[a] {
					if err := publishOne(ctx, p, e); err != nil {
						errs[w] = err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	return nil
}

func publishOne(ctx context.Context, p ledger.AccountPublisher, e ledger.AccountEvent) error {
	switch e := e.(type) {
	case ledger.AccountOpened:
		return p.PublishAccountOpened(ctx, e)
	case ledger.Deposited:
		return p.PublishDeposited(ctx, e)
	case ledger.Withdrew:
		return p.PublishWithdrew(ctx, e)
	}
	return fmt.Errorf("unexpected event %T", e)
}
