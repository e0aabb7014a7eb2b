package delivery

import (
	"slices"
	"sync"
)

// Recording holds the events a generated recorder (the <Entity>Recorder
// types of a test kit, which embed it) handled, in handling order. It is
// safe for concurrent use; its zero value is ready.
type Recording[K comparable, E interface{ EventKey() K }] struct {
	mu     sync.Mutex
	events []E
}

// Pass is a recorder's handling of events: when next is set it calls call
// (the next handler) first, and it records the events only when that
// returns nil, whose error it returns.
func (r *Recording[K, E]) Pass(next bool, call func() error, events ...E) error {
	if next {
		if err := call(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
	return nil
}

// Events returns the events handled so far, in handling order.
func (r *Recording[K, E]) Events() []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// EventsOf returns the events of the entity with key key handled so far,
// in handling order.
func (r *Recording[K, E]) EventsOf(key K) []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []E
	for _, e := range r.events {
		if e.EventKey() == key {
			out = append(out, e)
		}
	}
	return out
}

// Reset forgets the events recorded so far.
func (r *Recording[K, E]) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

// Calls holds the keys of the calls a generated recorder of a notification
// entity (which embeds it) handled, in handling order: a notification's
// handler gets a key, not an event. It is safe for concurrent use; its
// zero value is ready.
type Calls[K comparable] struct {
	mu   sync.Mutex
	keys []K
}

// Pass is a recorder's handling of a call for key: when next is set it
// calls call (the next handler) first, and it records key only when that
// returns nil, whose error it returns.
func (c *Calls[K]) Pass(next bool, call func() error, key K) error {
	if next {
		if err := call(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, key)
	return nil
}

// Keys returns the keys of the calls handled so far, in handling order.
func (c *Calls[K]) Keys() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.keys)
}

// CallsOf returns how many calls for key were handled so far.
func (c *Calls[K]) CallsOf(key K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.keys {
		if k == key {
			n++
		}
	}
	return n
}

// Reset forgets the calls recorded so far.
func (c *Calls[K]) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = nil
}
