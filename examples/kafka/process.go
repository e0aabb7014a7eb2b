package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// process is one consumer process: a Kafka consumer feeding a generated
// dispatcher. The version and state stores are shared between processes,
// as a database would be.
type process struct {
	name       string
	consumer   *kafka.Consumer[string, ledger.AccountEvent]
	dispatcher *ledger.AccountDispatcher
	cancel     context.CancelFunc
	done       chan error
}

func startProcess(cluster *kfake.Cluster, name string, b *brokerdemo.Book, slow time.Duration, versions runtime.VersionStore[string], states runtime.StateStore[string]) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{
			kgo.SeedBrokers(cluster.ListenAddrs()...),
			kgo.ClientID(name),
			kgo.HeartbeatInterval(100 * time.Millisecond),
			kgo.FetchMaxWait(100 * time.Millisecond),
		},
		Group:           group,
		Topics:          []string{topic},
		Codec:           ledger.AccountCodec{},
		DeadLetterTopic: deadLetters,
		CommitInterval:  100 * time.Millisecond,
		Logger:          quiet,
	})
	if err != nil {
		return nil, err
	}
	d, err := ledger.NewAccountDispatcher(brokerdemo.Handler{Who: name, Book: b, Slow: slow}, func(cfg *ledger.AccountConfig) {
		cfg.OnOutcome = c.OnOutcome
		cfg.Versions = versions
		cfg.States = states
		cfg.MaxActive = 64
		cfg.Logger = quiet
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{name: name, consumer: c, dispatcher: d, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- c.Run(ctx, d) }()
	return p, nil
}

// kill stops the process as a crash would: its lanes stop at once (running
// handlers are cancelled, pending events are lost), then its consumer stops
// without draining or committing and leaves the group. It returns how many
// accepted events were left without an outcome.
func (p *process) kill() int64 {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ce *runtime.CloseError
	var left int64
	if err := p.dispatcher.Close(ctx); errors.As(err, &ce) {
		left = ce.Pending
	}
	p.cancel()
	<-p.done
	return left
}

// stop stops the process cleanly: the consumer drains and commits, then the
// dispatcher closes.
func (p *process) stop(ctx context.Context) error {
	if err := p.consumer.Close(ctx); err != nil {
		return fmt.Errorf("close consumer %s: %w", p.name, err)
	}
	if err := p.dispatcher.Close(ctx); err != nil {
		return fmt.Errorf("close dispatcher %s: %w", p.name, err)
	}
	p.cancel()
	return nil
}
