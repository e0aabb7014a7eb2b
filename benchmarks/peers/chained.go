package peers

import (
	"context"
	"sync"
)

// chain is the pending events of one key, oldest first.
type chain struct {
	key string
	q   []Event
}

// chained is a per-key chain: a map from key to its pending events. The
// submit that finds a key without a chain creates one and starts a
// goroutine that drains it, one event after the other, and removes it from
// the map when it is empty. At most workers chains run at once; the others
// wait for a slot. The backlog is unbounded.
type chained struct {
	h      Handler
	mu     sync.Mutex
	chains map[string]*chain
	slots  chan struct{}
	wg     sync.WaitGroup
}

// NewChained returns a per-key chained dispatcher with at most workers
// chains running at once.
func NewChained(h Handler, workers int) (Peer, error) {
	return &chained{
		h:      h,
		chains: make(map[string]*chain),
		slots:  make(chan struct{}, workers),
	}, nil
}

func (p *chained) Submit(_ context.Context, key string, ev Event) error {
	p.mu.Lock()
	if c := p.chains[key]; c != nil {
		c.q = append(c.q, ev)
		p.mu.Unlock()
		return nil
	}
	c := &chain{key: key, q: []Event{ev}}
	p.chains[key] = c
	p.wg.Add(1)
	p.mu.Unlock()
	go p.run(c)
	return nil
}

// run drains c once a slot is free, then removes it from the map.
func (p *chained) run(c *chain) {
	defer p.wg.Done()
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	for {
		p.mu.Lock()
		if len(c.q) == 0 {
			delete(p.chains, c.key)
			p.mu.Unlock()
			return
		}
		ev := c.q[0]
		c.q = c.q[1:]
		p.mu.Unlock()
		p.h(c.key, ev)
	}
}

// Drain waits until every chain has drained and left the map.
func (p *chained) Drain(context.Context) error {
	p.wg.Wait()
	return nil
}

func (p *chained) Close(context.Context) error { return nil }
