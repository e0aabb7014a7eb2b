package brokerdemo

import (
	"context"
	"errors"
	"hash/crc32"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// Handler is one consumer's ledger.AccountHandler: it applies the events
// to Book in the name of Who. Every seventh account is Slow, so that
// messages finish out of delivery order (a commit or an acknowledgement
// has to wait for a running one, or go past it).
type Handler struct {
	Who  string
	Book *Book
	Slow time.Duration
}

var _ ledger.AccountHandler = Handler{}

// work waits Slow for every seventh account, or until ctx ends.
func (h Handler) work(ctx context.Context, account string) error {
	if h.Slow <= 0 || crc32.ChecksumIEEE([]byte(account))%7 != 0 {
		return nil
	}
	t := time.NewTimer(h.Slow)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HandleAccountOpened opens the account in the book at a balance of zero.
func (h Handler) HandleAccountOpened(ctx context.Context, e ledger.AccountOpened) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.Book.apply(h.Who, e.AccountID, 0, true)
	return nil
}

// HandleDeposited adds the amount to the account's balance.
func (h Handler) HandleDeposited(ctx context.Context, e ledger.Deposited) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.Book.apply(h.Who, e.AccountID, e.Amount, false)
	return nil
}

// HandleWithdrew takes the amount from the account's balance.
func (h Handler) HandleWithdrew(ctx context.Context, e ledger.Withdrew) error {
	if err := h.work(ctx, e.AccountID); err != nil {
		return err
	}
	h.Book.apply(h.Who, e.AccountID, -e.Amount, false)
	return nil
}

// HandleAccountFrozen does nothing: the stream has no such event.
func (Handler) HandleAccountFrozen(context.Context, ledger.AccountFrozen) error { return nil }

// HandleAccountClosed does nothing: the stream has no such event.
func (Handler) HandleAccountClosed(context.Context, ledger.AccountClosed) error { return nil }

// ResyncAccount fails permanently: the examples have no source of truth to
// read, so a key whose resequencer bound is hit parks.
func (Handler) ResyncAccount(context.Context, string) (ledger.AccountSnapshot, error) {
	return ledger.AccountSnapshot{}, runtime.Permanent(errors.New("no source of truth in this example"))
}
