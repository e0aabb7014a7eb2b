package brokerdemo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Consumer is what the scenario needs of a broker's consumer of Account
// events: every transport's Consumer is one.
type Consumer interface {
	Run(ctx context.Context, target transport.Target[ledger.AccountEvent]) error
	Close(ctx context.Context) error
	OnOutcome(key string, tag uint64, o runtime.Outcome)
}

// Shared is what the consumer processes share, as a database would be
// shared: the book, the version and state stores, and the handlers'
// latency (Handler.Slow).
type Shared struct {
	Book     *Book
	Versions runtime.VersionStore[string]
	States   runtime.StateStore[string]
	Slow     time.Duration
}

// NewShared returns the shared state of a run of total events, with
// in-memory stores.
func NewShared(total int, slow time.Duration) Shared {
	return Shared{Book: NewBook(total), Versions: runtime.NewMemoryVersionStore[string](),
		States: runtime.NewMemoryStateStore[string](), Slow: slow}
}

// Process is one consumer process: a broker's consumer feeding a
// generated AccountDispatcher whose handler applies to the shared book.
type Process[C Consumer] struct {
	Name       string
	Consumer   C
	Dispatcher *ledger.AccountDispatcher
	cancel     context.CancelFunc
	done       chan error
}

// Start builds the process's dispatcher (64 keys in progress, quiet) and
// runs c into it until Kill or Stop.
func Start[C Consumer](name string, c C, sh Shared) (*Process[C], error) {
	quiet := slog.New(slog.DiscardHandler)
	d, err := ledger.NewAccountDispatcher(Handler{Who: name, Book: sh.Book, Slow: sh.Slow}, func(cfg *ledger.AccountConfig) {
		cfg.OnOutcome = c.OnOutcome
		cfg.Versions = sh.Versions
		cfg.States = sh.States
		cfg.MaxActive = 64
		cfg.Logger = quiet
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Process[C]{Name: name, Consumer: c, Dispatcher: d, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- c.Run(ctx, d) }()
	return p, nil
}

// Kill stops the process as a crash would: its lanes stop at once
// (running handlers are cancelled, pending events are lost), then its
// consumer stops without draining or settling. It returns how many
// accepted events were left without an outcome.
func (p *Process[C]) Kill() int64 {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ce *runtime.CloseError
	var left int64
	if err := p.Dispatcher.Close(ctx); errors.As(err, &ce) {
		left = ce.Pending
	}
	p.cancel()
	<-p.done
	return left
}

// Stop stops the process cleanly: the consumer drains and settles, then
// the dispatcher closes.
func (p *Process[C]) Stop(ctx context.Context) error {
	if err := p.Consumer.Close(ctx); err != nil {
		return fmt.Errorf("close consumer %s: %w", p.Name, err)
	}
	if err := p.Dispatcher.Close(ctx); err != nil {
		return fmt.Errorf("close dispatcher %s: %w", p.Name, err)
	}
	p.cancel()
	return nil
}

// Skipped is the number of events delivered again that the processes'
// version guards skipped.
func Skipped[C Consumer](ps ...*Process[C]) int64 {
	var n int64
	for _, p := range ps {
		n += int64(p.Dispatcher.Stats()["Account"].Skipped)
	}
	return n
}

// Await waits until ready reports true (it is asked every 5ms: the
// consumers tell no signal for it), the consumer stops, or ctx ends.
func (p *Process[C]) Await(ctx context.Context, what string, ready func(C) bool) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !ready(p.Consumer) {
		select {
		case <-tick.C:
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("consumer %s stopped: %w", p.Name, err)
		case <-ctx.Done():
			return fmt.Errorf("consumer %s: %s: %w", p.Name, what, ctx.Err())
		}
	}
	return nil
}
