package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

type sinkFunc func(ctx context.Context, key string, e ledger.AccountEvent) error

func (f sinkFunc) Send(ctx context.Context, key string, e ledger.AccountEvent) error {
	return f(ctx, key, e)
}

// The generated producer refuses what the dispatcher refuses and sends the
// rest keyed by the account.
func TestProducerValidates(t *testing.T) {
	var sent []string
	p, err := ledger.NewAccountProducer(sinkFunc(func(_ context.Context, key string, e ledger.AccountEvent) error {
		sent = append(sent, key+"/"+e.EventName())
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.PublishDeposited(ctx, ledger.Deposited{Version: 1}); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Errorf("empty key: %v", err)
	}
	if err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a"}); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Errorf("version 0: %v", err)
	}
	if err := p.Publish(ctx, (*ledger.Withdrew)(nil)); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Errorf("nil event: %v", err)
	}
	if err := p.Publish(ctx, &ledger.Withdrew{AccountID: "a", Version: 2}); err != nil {
		t.Error(err)
	}
	if len(sent) != 1 || sent[0] != "a/Withdrew" {
		t.Errorf("sent %v", sent)
	}
	if _, err := ledger.NewAccountProducer(nil); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("nil sink: %v", err)
	}
}

type counter struct {
	n     atomic.Int64
	want  int64
	done  chan struct{}
	block <-chan struct{}
}

func (c *counter) event(ctx context.Context) error {
	if c.block != nil {
		select {
		case <-c.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.n.Add(1) == c.want {
		close(c.done)
	}
	return nil
}

func (c *counter) HandleAccountOpened(ctx context.Context, _ ledger.AccountOpened) error {
	return c.event(ctx)
}
func (c *counter) HandleDeposited(ctx context.Context, _ ledger.Deposited) error { return c.event(ctx) }
func (c *counter) HandleWithdrew(ctx context.Context, _ ledger.Withdrew) error   { return c.event(ctx) }
func (c *counter) HandleAccountFrozen(ctx context.Context, _ ledger.AccountFrozen) error {
	return c.event(ctx)
}
func (c *counter) HandleAccountClosed(ctx context.Context, _ ledger.AccountClosed) error {
	return c.event(ctx)
}
func (c *counter) ResyncAccount(context.Context, string) (ledger.AccountSnapshot, error) {
	return ledger.AccountSnapshot{}, runtime.ErrUnimplemented // no gaps here
}

// A record is finished, and committed past, only when every subscriber of
// the dispatcher reported its outcome; a subscriber without OnOutcome makes
// SubmitTagged refuse.
func TestRecordFinishedWhenEverySubscriberDone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic), kfake.SeedTopics(1, deadLetters))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	quiet := slog.New(slog.DiscardHandler)
	c, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.FetchMaxWait(100 * time.Millisecond)},
		Group:      group, Topics: []string{topic}, Codec: ledger.AccountCodec{}, DeadLetterTopic: deadLetters,
		CommitInterval: time.Hour, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	const events = 10
	gate := make(chan struct{})
	main := &counter{want: events, done: make(chan struct{})}
	audit := &counter{want: events, done: make(chan struct{}), block: gate}
	d, err := ledger.NewAccountDispatcher(main, func(cfg *ledger.AccountConfig) { cfg.Logger = quiet })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if _, err := d.SubmitTagged(ctx, ledger.Deposited{AccountID: "a", Version: 1}, 1, 0); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("SubmitTagged without OnOutcome: %v", err)
	}
	d2, err := ledger.NewAccountDispatcher(main, func(cfg *ledger.AccountConfig) { cfg.OnOutcome, cfg.Logger = c.OnOutcome, quiet })
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close(ctx)
	if err := d2.Subscribe("audit", audit, func(cfg *ledger.AccountConfig) { cfg.OnOutcome, cfg.Logger = c.OnOutcome, quiet }); err != nil {
		t.Fatal(err)
	}

	pcl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: pcl, Topic: topic, Codec: ledger.AccountCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.NewAccountProducer(sink)
	if err != nil {
		t.Fatal(err)
	}
	for v := uint64(1); v <= events; v++ {
		if err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a", Version: v, Amount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx, d2) }()
	<-main.done
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cluster.GroupInfo(group).Commits[topic][0].Offset; got != 0 {
		t.Errorf("committed %d while the audit subscriber had finished nothing", got)
	}
	close(gate)
	<-audit.done
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := cluster.GroupInfo(group).Commits[topic][0].Offset; got != events {
		t.Errorf("committed %d after both subscribers finished, want %d", got, events)
	}
}
