package peers

import (
	"context"
	"sync"
)

// striped is hash striping: crc32(key) % N picks one of N channels, each
// drained by its own goroutine, so one key's events stay in order and
// every key of a stripe waits behind the others.
type striped struct {
	stripes []chan job
	stripe  striper
	wg      sync.WaitGroup
}

// NewStriped returns workers stripes, each a channel buffering
// Capacity/workers events drained by one goroutine.
func NewStriped(h Handler, workers int) (Peer, error) {
	p := &striped{stripes: make([]chan job, workers), stripe: newStriper(workers)}
	p.wg.Add(workers)
	for i := range p.stripes {
		ch := make(chan job, max(1, Capacity/workers))
		p.stripes[i] = ch
		go func() {
			defer p.wg.Done()
			for j := range ch {
				h(j.key, j.ev)
			}
		}()
	}
	return p, nil
}

func (p *striped) Submit(ctx context.Context, key string, ev Event) error {
	ch := p.stripes[p.stripe.of(key)]
	select {
	case ch <- job{key, ev}:
		return nil
	default:
	}
	select {
	case ch <- job{key, ev}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain closes every stripe and waits for its goroutine to empty it.
func (p *striped) Drain(context.Context) error {
	for _, ch := range p.stripes {
		close(ch)
	}
	p.wg.Wait()
	return nil
}

func (p *striped) Close(context.Context) error { return nil }
