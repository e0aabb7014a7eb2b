package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

const (
	topic       = "ledger.accounts"
	deadLetters = "ledger.accounts.dlt"
	group       = "ledger"
	partitions  = 12
)

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg brokerdemo.Config) error {
	start := time.Now()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic), kfake.SeedTopics(1, deadLetters))
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	defer cluster.Close()
	accounts := brokerdemo.Stream(cfg.Seed, 0x6b61666b61, cfg.Accounts, cfg.Events)
	total := cfg.Accounts * cfg.Events
	sh := brokerdemo.NewShared(total, cfg.Slow)
	b, versions := sh.Book, sh.Versions

	a, err := startProcess(cluster, "a", sh)
	if err != nil {
		return err
	}
	c, err := startProcess(cluster, "b", sh)
	if err != nil {
		a.Kill()
		return err
	}
	if _, err := cluster.WaitGroupStable(ctx, group, 2); err != nil {
		a.Kill()
		c.Kill()
		return fmt.Errorf("wait for the group: %w", err)
	}

	pcl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer pcl.Close()
	// The producer reaches the cluster as the consumers do: with the
	// client's options (a client of its own, closed with it).
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)}, Topic: topic, Codec: ledger.AccountCodec{},
	})
	if err != nil {
		return err
	}
	defer func() { _ = sink.Close(context.Background()) }()
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}

	// A record that does not decode: it goes to the dead-letter topic and its
	// partition goes on.
	bad := &kgo.Record{Topic: topic, Key: []byte("acct-000"), Value: []byte("{not json"),
		Headers: []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte("Deposited")}}}
	if err := pcl.ProduceSync(ctx, bad).FirstErr(); err != nil {
		return err
	}
	k, err := brokerdemo.KillMidStream(ctx, sh, producer, accounts, a, c, func(c *kafka.Consumer[string, ledger.AccountEvent]) int { return c.Stats().InFlight })
	if err != nil {
		return err
	}

	tally := brokerdemo.Check(ctx, b, versions, accounts, cfg.Events)
	as, cs := a.Consumer.Stats(), c.Consumer.Stats()
	skipped := brokerdemo.Skipped(a, c)
	fmt.Fprintln(out, "ordergen kafka example: the ledger schema across two consumer processes (in-process kfake cluster)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, published by AccountProducer to %s (%d partitions), keyed by AccountID\n", cfg.Accounts, total, topic, partitions)
	fmt.Fprintf(out, "consumers  a and b in group %s, 64 keys in progress each, committing every 100ms\n", group)
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d records in flight, %d accepted events abandoned\n", k.Applied, total, k.Unsettled, k.Abandoned)
	fmt.Fprintf(out, "rebalance  b took over a's partitions from a's last commit: %d offsets skipped by the commit metadata,\n", cs.SkippedFinished)
	fmt.Fprintf(out, "           %d re-delivered events (finished by a after its last commit) skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d\n", tally.By["a"], tally.By["b"])
	fmt.Fprintf(out, "dead letter 1 undecodable record sent to %s (%d write(s): at least once); its partition kept flowing\n", deadLetters, as.DeadLettered+cs.DeadLettered)
	return brokerdemo.Report(out, tally, total, as.DeadLettered+cs.DeadLettered >= 1, start)
}
