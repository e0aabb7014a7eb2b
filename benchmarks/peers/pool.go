package peers

import (
	"context"
	"sync"
)

// job is one event on its way to a worker.
type job struct {
	key string
	ev  Event
}

// pool is an unordered worker pool: workers goroutines read one buffered
// channel. Two events of one key may run at once or overtake each other.
type pool struct {
	jobs chan job
	wg   sync.WaitGroup
}

// NewPool returns a worker pool of workers goroutines reading one channel
// that buffers Capacity events. It does not keep per-key order.
func NewPool(h Handler, workers int) (Peer, error) {
	p := &pool{jobs: make(chan job, Capacity)}
	p.wg.Add(workers)
	for range workers {
		go func() {
			defer p.wg.Done()
			for j := range p.jobs {
				h(j.key, j.ev)
			}
		}()
	}
	return p, nil
}

func (p *pool) Submit(ctx context.Context, key string, ev Event) error {
	select {
	case p.jobs <- job{key, ev}:
		return nil
	default:
	}
	select {
	case p.jobs <- job{key, ev}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain closes the channel and waits for the workers to empty it.
func (p *pool) Drain(context.Context) error {
	close(p.jobs)
	p.wg.Wait()
	return nil
}

func (p *pool) Close(context.Context) error { return nil }
