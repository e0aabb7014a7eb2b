package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
)

// process is one consumer process: a RabbitMQ consumer feeding a generated
// dispatcher. The version and state stores are shared between processes,
// as a database would be.
type process struct {
	name       string
	consumer   *rabbitmq.Consumer[string, ledger.AccountEvent]
	dispatcher *ledger.AccountDispatcher
	cancel     context.CancelFunc
	done       chan error
}

func startProcess(url string, topo rabbitmq.Topology, name string, b *brokerdemo.Book, slow time.Duration, versions runtime.VersionStore[string], states runtime.StateStore[string]) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := rabbitmq.NewConsumer[string, ledger.AccountEvent](rabbitmq.Config[ledger.AccountEvent]{
		URL:      url,
		Topology: topo,
		Codec:    ledger.AccountCodec{},
		Prefetch: 64,
		Name:     name,
		Logger:   quiet,
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

// subscribed waits until the process subscribed to every queue of topo.
func (p *process) subscribed(ctx context.Context, topo rabbitmq.Topology) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for p.consumer.Stats().Subscribed < topo.Queues {
		select {
		case <-tick.C:
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("consumer %s stopped: %w", p.name, err)
		case <-ctx.Done():
			return fmt.Errorf("consumer %s did not subscribe: %w", p.name, ctx.Err())
		}
	}
	return nil
}

// kill stops the process as a crash would: its lanes stop at once (running
// handlers are cancelled, pending events are lost), then its consumer stops
// without acknowledging anything more and closes its connection. It
// returns how many accepted events were left without an outcome.
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

// stop stops the process cleanly: the consumer drains and acknowledges,
// then the dispatcher closes.
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
