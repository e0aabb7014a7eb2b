package main

import (
	"context"
	"errors"
	"hash/crc32"
	"sync"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// book is the ledger both consumers write to, like a shared database: the
// balances, and who applied how many events.
type book struct {
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

func newBook(want int) *book {
	return &book{balances: map[string]int64{}, by: map[string]int{}, want: want, done: make(chan struct{})}
}

// after returns a channel closed once n events are applied.
func (b *book) after(n int) <-chan struct{} {
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

func (b *book) apply(who, account string, delta int64, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if open {
		b.balances[account] = 0
	} else {
		b.balances[account] += delta
	}
	b.applied++
	b.by[who]++
	for i := 0; i < len(b.marks); i++ {
		if b.applied >= b.marks[i].at {
			close(b.marks[i].ch)
			b.marks = append(b.marks[:i], b.marks[i+1:]...)
			i--
		}
	}
	if b.applied == b.want {
		close(b.done)
	}
}

func (b *book) snapshot() (map[string]int64, int, map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bal := make(map[string]int64, len(b.balances))
	for k, v := range b.balances {
		bal[k] = v
	}
	by := make(map[string]int, len(b.by))
	for k, v := range b.by {
		by[k] = v
	}
	return bal, b.applied, by
}

// handler is one consumer's AccountHandler: it applies to the book. Every
// seventh account is slow, so that messages finish out of delivery order and
// are acknowledged one by one past a running one.
type handler struct {
	who  string
	b    *book
	slow time.Duration
}

func (h handler) work(ctx context.Context, account string) error {
	if h.slow <= 0 || crc32.ChecksumIEEE([]byte(account))%7 != 0 {
		return nil
	}
	t := time.NewTimer(h.slow)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ ledger.AccountHandler = handler{}

func (h handler) HandleAccountOpened(ctx context.Context, e ledger.AccountOpened) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.b.apply(h.who, e.AccountID, 0, true)
	return nil
}

func (h handler) HandleDeposited(ctx context.Context, e ledger.Deposited) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.b.apply(h.who, e.AccountID, e.Amount, false)
	return nil
}

func (h handler) HandleWithdrew(ctx context.Context, e ledger.Withdrew) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.b.apply(h.who, e.AccountID, -e.Amount, false)
	return nil
}

func (h handler) HandleAccountFrozen(context.Context, ledger.AccountFrozen) error { return nil }

func (h handler) HandleAccountClosed(context.Context, ledger.AccountClosed) error { return nil }

// ResyncAccount implements ledger.AccountHandler: this example has no source
// of truth to read, so a key whose resequencer bound is hit parks.
func (h handler) ResyncAccount(context.Context, string) (ledger.AccountSnapshot, error) {
	return ledger.AccountSnapshot{}, runtime.Permanent(errors.New("no source of truth in this example"))
}
