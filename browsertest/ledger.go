package browsertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// Ledger is the ledger example's Account dispatcher, with a handler that
// fails for the accounts an operator's tests break, and its console mounted
// under /ops/ on a local server.
type Ledger struct {
	// Accounts is the dispatcher.
	Accounts *ledger.AccountDispatcher
	// URL is the console's address (ending in /ops/).
	URL string
	// Origin is the server's address: a page under it (Probe) is of the
	// console's origin.
	Origin string
	// Log receives the console's log.
	Log *SyncBuffer
	// Console is the console.
	Console *console.Console

	bank *Bank
	srv  *httptest.Server
}

// LedgerOptions configure NewLedger.
type LedgerOptions struct {
	// Authorize is given to the console: nil leaves it read-only.
	Authorize console.Authorizer
	// Refresh is the console's Refresh: negative for none, as the tests
	// want (they reload when they choose to).
	Refresh time.Duration
	// Extra are more entities for the console, after Account.
	Extra []inspect.Inspector
	// Transports are given to the console.
	Transports []inspect.Transport
	// Timeout is the handlers' timeout per attempt (zero: the schema's);
	// Attempts the attempts of an event (zero: 3).
	Timeout  time.Duration
	Attempts int
	// Sample is the console's Sample: negative for none (the tests call
	// Console.Sample when they choose), zero for the default.
	Sample time.Duration
	// StuckAfter is the console's StuckAfter (zero: its default).
	StuckAfter time.Duration
}

// NewLedger starts the dispatcher and the console. Close stops both.
func NewLedger(opts LedgerOptions) (*Ledger, error) {
	b := NewBank()
	d, err := ledger.NewAccountDispatcher(b, func(c *ledger.AccountConfig) {
		c.Retry = runtime.Retry{Attempts: cmp.Or(opts.Attempts, 3), Initial: time.Millisecond, Max: 2 * time.Millisecond}
		if opts.Timeout > 0 {
			c.Timeout = opts.Timeout
		}
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	if err != nil {
		return nil, err
	}
	logs := &SyncBuffer{}
	c, err := console.New(console.Config{
		Inspectors: append([]inspect.Inspector{d.Inspector()}, opts.Extra...),
		Transports: opts.Transports,
		Authorize:  opts.Authorize,
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
		Title:      "ledger",
		Refresh:    opts.Refresh,
		Sample:     opts.Sample,
		StuckAfter: opts.StuckAfter,
	})
	if err != nil {
		d.Close(context.Background())
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", c))
	mux.HandleFunc("GET /probe", func(w http.ResponseWriter, _ *http.Request) {
		// A page of the console's origin without its script-free policy,
		// from which a test calls the API as a page's script would.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>probe</title>")
	})
	srv := httptest.NewServer(mux)
	return &Ledger{Accounts: d, URL: srv.URL + "/ops/", Origin: srv.URL, Log: logs, Console: c, bank: b, srv: srv}, nil
}

// Close stops the server, the console's sampler and the dispatcher.
func (l *Ledger) Close() {
	l.srv.Close()
	l.Console.Close()
	l.Accounts.Close(context.Background())
}

// Park breaks account and publishes its opening and then deposits, events
// in all, which park: the first fails every attempt, the others join it.
func (l *Ledger) Park(ctx context.Context, account string, events int) error {
	l.bank.Break(account, true)
	if err := l.Publish(ctx, account, events); err != nil {
		return err
	}
	return l.Accounts.Flush(ctx)
}

// Fix makes account's events succeed from now on.
func (l *Ledger) Fix(account string) { l.bank.Break(account, false) }

// Bank is the dispatcher's handler, for a test to slow or hang accounts.
func (l *Ledger) Bank() *Bank { return l.bank }

// Publish publishes account's opening (version 1) and then deposits, events
// in all, without waiting for them.
func (l *Ledger) Publish(ctx context.Context, account string, events int) error {
	if err := l.Accounts.PublishAccountOpened(ctx, ledger.AccountOpened{AccountID: account, Version: 1, Owner: "Ada Lovelace",
		OpenedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}); err != nil {
		return err
	}
	for v := 2; v <= events; v++ {
		if err := l.Accounts.PublishDeposited(ctx, ledger.Deposited{AccountID: account, Version: uint64(v), Amount: int64(100 * v)}); err != nil {
			return err
		}
	}
	return nil
}

// Applied returns the versions of account's events the bank applied, in
// the order it applied them.
func (l *Ledger) Applied(account string) []uint64 { return l.bank.Applied(account) }

// Bank is the Account handler: it applies events, and fails those of the
// accounts it was told are broken.
type Bank struct {
	ledger.UnimplementedAccountHandler
	mu      sync.Mutex
	broken  map[string]error
	applied map[string][]uint64
	slow    map[string]chan struct{}
	hung    map[string]chan struct{}
	started chan string
}

// NewBank returns a bank with no broken account.
func NewBank() *Bank {
	return &Bank{broken: map[string]error{}, applied: map[string][]uint64{}, slow: map[string]chan struct{}{},
		hung: map[string]chan struct{}{}, started: make(chan string, 1024)}
}

// Hang makes account's events wait until release is closed, ignoring their
// context: a handler that never returns, as far as the engine can tell.
func (b *Bank) Hang(account string, release chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hung[account] = release
}

// Started returns the accounts whose events the bank began to handle, one
// value per attempt of a slow or hung account.
func (b *Bank) Started() <-chan string { return b.started }

// Break makes account's events fail (broken) or succeed.
func (b *Bank) Break(account string, broken bool) {
	var err error
	if broken {
		err = fmt.Errorf("core banking: account %s is locked for an audit", account)
	}
	b.BreakWith(account, err)
}

// BreakWith makes account's events fail with err (nil: succeed).
func (b *Bank) BreakWith(account string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		delete(b.broken, account)
		return
	}
	b.broken[account] = err
}

// Slow makes account's events wait until release is closed.
func (b *Bank) Slow(account string, release chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.slow[account] = release
}

// Applied returns the versions applied for account, in order.
func (b *Bank) Applied(account string) []uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint64(nil), b.applied[account]...)
}

func (b *Bank) apply(ctx context.Context, account string, version uint64) error {
	b.mu.Lock()
	err, release, hung := b.broken[account], b.slow[account], b.hung[account]
	b.mu.Unlock()
	if release != nil || hung != nil {
		select {
		case b.started <- account:
		default:
		}
	}
	if hung != nil {
		<-hung
	}
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.applied[account] = append(b.applied[account], version)
	return nil
}

// HandleAccountOpened implements ledger.AccountHandler.
func (b *Bank) HandleAccountOpened(ctx context.Context, e ledger.AccountOpened) error {
	return b.apply(ctx, e.AccountID, e.Version)
}

// HandleDeposited implements ledger.AccountHandler.
func (b *Bank) HandleDeposited(ctx context.Context, e ledger.Deposited) error {
	return b.apply(ctx, e.AccountID, e.Version)
}

// HandleWithdrew implements ledger.AccountHandler.
func (b *Bank) HandleWithdrew(ctx context.Context, e ledger.Withdrew) error {
	if e.Amount > 1_000_000 {
		return runtime.Permanent(errors.New("withdrawal over the daily limit"))
	}
	return b.apply(ctx, e.AccountID, e.Version)
}

// SyncBuffer is a log destination safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}
