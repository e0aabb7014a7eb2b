package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// The account the example leaves parked in its store when it ends, so that
// whoever ran it has something to operate: the scenarios before replay
// every key they park, and leave nothing to look at.
const (
	leftAccount = "acct-review"
	leftVersion = 3
	leftEvents  = 6
)

// errReview is why leftAccount's handler refuses its events: a refusal no
// retry cures, which an operator resolves (replay after the review, or
// discard).
var errReview = errors.New("account under a compliance review: postings refused until the review ends")

// runLeftParked parks leftAccount on purpose, through the store, and leaves
// it parked when the example ends; shown names the store in the commands
// the report prints (the empty string: a temporary store, removed at the
// end).
func runLeftParked(ctx context.Context, out io.Writer, store *sqlstore.Store, shown string, seed uint64) error {
	b := newBook(0, seed)
	b.failPermanently(leftAccount, leftVersion, errReview)
	d, err := ledger.NewAccountDispatcher(b, func(c *ledger.AccountConfig) {
		c.Logger = quietLogger()
		c.Store = store // the park outlives the process
	})
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	events, _ := accountStream(rand.New(rand.NewPCG(seed, 17)), leftAccount, leftEvents)
	if err := publishAll(ctx, d, events); err != nil {
		return err
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	pk, err := parkedAlone(ctx, d, leftAccount)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "left     %s v%d refused (%v): the key parked with %d events, and stays parked\n",
		leftAccount, leftVersion, errReview, pk.Events)
	if shown == "" {
		fmt.Fprintf(out, "         (in the temporary store, removed now: -store FILE keeps it for ordergen-parked)\n")
		return d.Close(ctx)
	}
	fmt.Fprintf(out, "         for you to operate: go run ./cmd/ordergen-parked -store %s list\n", shown)
	fmt.Fprintf(out, "         and the console: go run ./cmd/ordergen-parked -store %s serve\n", shown)
	return d.Close(ctx)
}
