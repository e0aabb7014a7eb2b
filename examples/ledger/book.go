package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// book is the example's AccountHandler: an in-memory ledger whose handlers
// take a random time, as a database round trip would, and can be told to fail.
type book struct {
	latency time.Duration // each handler call sleeps up to this long

	mu       sync.Mutex
	rng      *rand.Rand
	balances map[string]int64
	opened   map[string]bool
	lastDone map[string]time.Time
	applied  map[string]int // events applied per account
	resynced map[string]int // resyncs per account
	watches  []watch
	faults   map[fault]*faultState
	// source is the source of truth that ResyncAccount reads; nil: none,
	// and a key whose resequencer bound is hit parks.
	source *truth
}

// fault names one event of one account.
type fault struct {
	account string
	version uint64
}

type faultState struct {
	transient int   // fail this many more attempts, then succeed
	permanent error // fail permanently until fixed
	attempts  int
}

func newBook(latency time.Duration, seed uint64) *book {
	return &book{
		latency:  latency,
		rng:      rand.New(rand.NewPCG(seed, seed)),
		balances: map[string]int64{},
		opened:   map[string]bool{},
		lastDone: map[string]time.Time{},
		applied:  map[string]int{},
		resynced: map[string]int{},
		faults:   map[fault]*faultState{},
	}
}

// failTransiently makes the event fail n times before it succeeds.
func (b *book) failTransiently(account string, version uint64, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[fault{account, version}] = &faultState{transient: n}
}

// failPermanently makes the event fail permanently until fix is called.
func (b *book) failPermanently(account string, version uint64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[fault{account, version}] = &faultState{permanent: err}
}

// fix clears every fault of account.
func (b *book) fix(account string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for f := range b.faults {
		if f.account == account {
			delete(b.faults, f)
		}
	}
}

// attempts returns how many times the event was tried.
func (b *book) attempts(account string, version uint64) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.faults[fault{account, version}]; f != nil {
		return f.attempts
	}
	return 0
}

// work simulates the handler's database round trip and applies its faults.
func (b *book) work(ctx context.Context, account string, version uint64) error {
	b.mu.Lock()
	// Between half the bound and the bound: very short sleeps are coarse on
	// some virtual machines and would distort the picture.
	d := time.Duration(0)
	if b.latency > 1 {
		d = b.latency/2 + time.Duration(b.rng.Int64N(int64(b.latency/2)))
	}
	f := b.faults[fault{account, version}]
	var err error
	if f != nil {
		f.attempts++
		switch {
		case f.permanent != nil:
			err = runtime.Permanent(f.permanent)
		case f.transient > 0:
			f.transient--
			err = errors.New("database timeout")
		}
	}
	b.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func (b *book) apply(account string, delta int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.opened[account] {
		return runtime.Permanent(fmt.Errorf("account %s is not open", account))
	}
	if b.balances[account]+delta < 0 {
		return runtime.Permanent(fmt.Errorf("account %s would go negative", account))
	}
	b.balances[account] += delta
	b.lastDone[account] = time.Now()
	b.count(account)
	return nil
}

// watch is a channel closed when an account has had n events applied.
type watch struct {
	account string
	n       int
	ch      chan struct{}
}

// after returns a channel closed once account has had n events applied.
func (b *book) after(account string, n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := watch{account, n, make(chan struct{})}
	b.watches = append(b.watches, w)
	return w.ch
}

// count records an applied event of account; b.mu is held.
func (b *book) count(account string) {
	b.applied[account]++
	kept := b.watches[:0]
	for _, w := range b.watches {
		if w.account == account && b.applied[account] >= w.n {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	b.watches = kept
}

// HandleAccountOpened implements ledger.AccountHandler.
func (b *book) HandleAccountOpened(ctx context.Context, e ledger.AccountOpened) error {
	if err := b.work(ctx, e.AccountID, e.Version); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened[e.AccountID] = true
	b.balances[e.AccountID] = 0
	b.lastDone[e.AccountID] = time.Now()
	b.count(e.AccountID)
	return nil
}

// HandleDeposited implements ledger.AccountHandler.
func (b *book) HandleDeposited(ctx context.Context, e ledger.Deposited) error {
	if err := b.work(ctx, e.AccountID, e.Version); err != nil {
		return err
	}
	return b.apply(e.AccountID, e.Amount)
}

// HandleWithdrew implements ledger.AccountHandler.
func (b *book) HandleWithdrew(ctx context.Context, e ledger.Withdrew) error {
	if err := b.work(ctx, e.AccountID, e.Version); err != nil {
		return err
	}
	return b.apply(e.AccountID, -e.Amount)
}

// HandleAccountFrozen implements ledger.AccountHandler.
func (b *book) HandleAccountFrozen(ctx context.Context, e ledger.AccountFrozen) error {
	return b.work(ctx, e.AccountID, e.Version)
}

// HandleAccountClosed implements ledger.AccountHandler.
func (b *book) HandleAccountClosed(ctx context.Context, e ledger.AccountClosed) error {
	return b.work(ctx, e.AccountID, e.Version)
}

func (b *book) balance(account string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.balances[account]
}

func (b *book) finishedAt(account string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastDone[account]
}
