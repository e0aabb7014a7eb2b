package brokerdemo

import (
	"maps"
	"sync"
)

// Book is the ledger both consumers of an example write to, like a shared
// database: the balances, and who applied how many events. It is safe for
// concurrent use.
type Book struct {
	// mu guards every field below.
	mu       sync.Mutex
	balances map[string]int64
	applied  int
	by       map[string]int
	want     int
	marks    []mark
	done     chan struct{}
}

// mark is closed once applied reaches at.
type mark struct {
	at int
	ch chan struct{}
}

// NewBook returns an empty book that expects want events.
func NewBook(want int) *Book {
	return &Book{balances: map[string]int64{}, by: map[string]int{}, want: want, done: make(chan struct{})}
}

// After returns a channel closed once n events are applied.
func (b *Book) After(n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{})
	if b.applied >= n {
		close(ch)
		return ch
	}
	b.marks = append(b.marks, mark{n, ch})
	return ch
}

// Done returns a channel closed once every expected event is applied.
func (b *Book) Done() <-chan struct{} { return b.done }

// apply records one event of account applied by the consumer who: open
// sets the balance to zero, anything else adds delta.
func (b *Book) apply(who, account string, delta int64, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if open {
		b.balances[account] = 0
	} else {
		b.balances[account] += delta
	}
	b.applied++
	b.by[who]++
	kept := b.marks[:0]
	for _, m := range b.marks {
		if b.applied >= m.at {
			close(m.ch)
			continue
		}
		kept = append(kept, m)
	}
	b.marks = kept
	if b.applied == b.want {
		close(b.done)
	}
}

// Snapshot returns copies of the balances and of the events applied per
// consumer, and how many events were applied in all.
func (b *Book) Snapshot() (balances map[string]int64, applied int, by map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.balances), b.applied, maps.Clone(b.by)
}
