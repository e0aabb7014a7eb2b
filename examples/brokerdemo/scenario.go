package brokerdemo

import (
	"context"
	"fmt"
	"io"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
)

// Killed is what the scenario saw when it killed the first process.
type Killed struct {
	Unsettled int   // the messages its consumer held unsettled
	Abandoned int64 // the accepted events it left without an outcome
	Applied   int   // the events applied by then, by every process
}

// KillMidStream is the scenario's middle, the same on every broker: it
// publishes accounts through producer, kills a (as a crash) once a third of
// the events are applied, waits until every event is applied (c takes a's
// share over) and stops c cleanly. unsettled reads how many messages a's
// consumer holds unsettled, just before the kill.
func KillMidStream[C Consumer](ctx context.Context, sh Shared, producer ledger.AccountPublisher, accounts [][]ledger.AccountEvent,
	a, c *Process[C], unsettled func(C) int) (Killed, error) {
	total := 0
	for _, evs := range accounts {
		total += len(evs)
	}
	b := sh.Book
	published := make(chan error, 1)
	go func() { published <- Publish(ctx, producer, accounts) }()
	var k Killed
	select {
	case <-b.After(total / 3):
	case <-ctx.Done():
		<-published // it stops with ctx
		return k, ctx.Err()
	}
	k.Unsettled = unsettled(a.Consumer)
	k.Abandoned = a.Kill()
	_, k.Applied, _ = b.Snapshot()
	if err := <-published; err != nil {
		return k, err
	}
	select {
	case <-b.Done():
	case <-ctx.Done():
		_, applied, _ := b.Snapshot()
		return k, fmt.Errorf("only %d of %d events applied: %w", applied, total, ctx.Err())
	}
	return k, c.Stop(ctx)
}

// Report prints the scenario's last lines, the balances and the verdict,
// and returns an error unless t is whole for total events and deadLettered
// (the broker's own check of the bad message) holds.
func Report(out io.Writer, t Tally, total int, deadLettered bool, start time.Time) error {
	fmt.Fprintf(out, "balances   %d of %d accounts equal in-order application; %d at their last version; %d events applied once each\n", t.Equal, t.Accounts, t.Complete, t.Applied)
	ok := t.OK(total) && deadLettered
	verdict := "OK: nothing lost, nothing applied twice"
	if !ok {
		verdict = "FAILED"
	}
	fmt.Fprintf(out, "verdict    %s (%v)\n", verdict, time.Since(start).Round(10*time.Millisecond))
	if !ok {
		return fmt.Errorf("the balances do not equal in-order application, or the bad message was not dead-lettered")
	}
	return nil
}
