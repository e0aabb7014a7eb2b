package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// Outbox is the ledger example's transactional outbox of Account events in
// a SQLite store, with its relay (the console's transport, whose stopped
// keys it retries and discards) and a sink that refuses the accounts a test
// breaks.
type Outbox struct {
	// Relay ships the outbox: give it to the console as a transport.
	Relay *outbox.Relay[string, ledger.AccountEvent]

	store  *sqlstore.Store
	writer *ledger.AccountOutbox
	sink   *refusingSink
}

// NewOutbox opens a SQLite store in dir and the relay of its Account
// outbox; Close closes both.
func NewOutbox(ctx context.Context, dir string) (*Outbox, error) {
	s, err := sqlite.Open(ctx, filepath.Join(dir, "outbox.db"))
	if err != nil {
		return nil, err
	}
	w, err := ledger.NewAccountOutbox(s)
	if err != nil {
		s.Close()
		return nil, err
	}
	sink := &refusingSink{broken: map[string]bool{}}
	r, err := outbox.New(outbox.Config[string, ledger.AccountEvent]{
		Store: s, Entity: w.Entity(), Codec: ledger.AccountCodec{}, Sink: sink,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return &Outbox{Relay: r, store: s, writer: w, sink: sink}, nil
}

// Close closes the relay and the store.
func (o *Outbox) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o.Relay.Close(ctx)
	o.store.Close()
}

// Write appends account's opening and then deposits, events in all, to the
// outbox, in one transaction.
func (o *Outbox) Write(ctx context.Context, account string, events int) error {
	tx, err := o.store.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := o.writer.PublishAccountOpenedTx(ctx, tx, ledger.AccountOpened{AccountID: account, Owner: "Ada Lovelace"}); err != nil {
		return err
	}
	for i := 2; i <= events; i++ {
		if _, err := o.writer.PublishDepositedTx(ctx, tx, ledger.Deposited{AccountID: account, Amount: int64(100 * i)}); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Ship runs relay rounds until one sends nothing, then reads the outbox
// again, so that the console shows what it holds.
func (o *Outbox) Ship(ctx context.Context) error {
	for {
		n, err := o.Relay.RunOnce(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	return o.Relay.Refresh(ctx)
}

// Break makes the sink refuse account's events for good (broken), or take
// them.
func (o *Outbox) Break(account string, broken bool) {
	o.sink.mu.Lock()
	defer o.sink.mu.Unlock()
	o.sink.broken[account] = broken
}

// Sent returns the accounts and versions the sink took, in order.
func (o *Outbox) Sent() []string {
	o.sink.mu.Lock()
	defer o.sink.mu.Unlock()
	return append([]string(nil), o.sink.sent...)
}

// Stopped returns the outbox's keys that do not flow.
func (o *Outbox) Stopped(ctx context.Context) ([]sqlstore.OutboxKey, error) {
	return o.store.OutboxKeys(ctx, o.writer.Entity(), 0)
}

// refusingSink takes events, but refuses those of broken accounts with a
// permanent error, which parks the key in the outbox at once.
type refusingSink struct {
	mu     sync.Mutex
	broken map[string]bool
	sent   []string
}

func (s *refusingSink) Send(_ context.Context, key string, e ledger.AccountEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken[key] {
		return runtime.Permanent(errors.New("broker: record for " + key + " rejected by a schema check"))
	}
	s.sent = append(s.sent, fmt.Sprintf("%s:%d", key, e.EventVersion()))
	return nil
}
