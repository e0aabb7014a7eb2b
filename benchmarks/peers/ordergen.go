package peers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ordergen/ordergen/runtime"
)

// ordergenPeer is the ordergen runtime's lane engine.
type ordergenPeer struct {
	e *runtime.Engine[string, Event]
}

// NewOrdergen returns the ordergen runtime's engine with MaxActive set to
// workers and a blocking backlog of Capacity events, so nothing is
// rejected.
func NewOrdergen(h Handler, workers int) (Peer, error) {
	handle := func(_ context.Context, key string, ev Event) error {
		h(key, ev)
		return nil
	}
	e, err := runtime.New(handle, runtime.Config[string, Event]{
		Name:      "bench",
		MaxActive: workers,
		Backlog:   runtime.Backlog{PerKey: Capacity, Total: Capacity, WhenFull: runtime.Block},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, fmt.Errorf("ordergen: %w", err)
	}
	return &ordergenPeer{e: e}, nil
}

func (p *ordergenPeer) Submit(ctx context.Context, key string, ev Event) error {
	return p.e.Submit(ctx, key, ev)
}

func (p *ordergenPeer) Drain(ctx context.Context) error {
	if err := p.e.Flush(ctx); err != nil {
		return fmt.Errorf("ordergen: flush: %w", err)
	}
	return nil
}

func (p *ordergenPeer) Close(ctx context.Context) error {
	if err := p.e.Close(ctx); err != nil {
		return fmt.Errorf("ordergen: close: %w", err)
	}
	return nil
}
