package main

import (
	"context"
	"errors"
	"sync"
	"testing"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

var errRefused = errors.New("refused by the test")

// refusingBook refuses every account opening for good.
type refusingBook struct{ ledger.AccountHandler }

func (refusingBook) HandleAccountOpened(context.Context, ledger.AccountOpened) error {
	return runtime.Permanent(errRefused)
}

// openAndFlush publishes the opening of acct-1, which refusingBook refuses,
// and waits until it has an outcome.
func openAndFlush(t *testing.T, d *ledger.AccountDispatcher) ledger.AccountOpened {
	t.Helper()
	ctx := context.Background()
	opened := ledger.AccountOpened{AccountID: "acct-1", Version: 1, Owner: "ada"}
	if err := d.PublishAccountOpened(ctx, opened); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return opened
}

// TestDeadLetterSinkGetsTheEntityEvent checks that the generated dispatcher
// hands its DeadLetter sink the event as the schema's type, with its key,
// error and attempts, not the runtime's internal envelope.
func TestDeadLetterSinkGetsTheEntityEvent(t *testing.T) {
	var mu sync.Mutex
	var got []runtime.DeadLetterEvent[string, ledger.AccountEvent]
	d, err := ledger.NewAccountDispatcher(refusingBook{}, func(c *ledger.AccountConfig) {
		c.OnExhausted = runtime.SendToDeadLetter
		c.DeadLetter = func(_ context.Context, dl runtime.DeadLetterEvent[string, ledger.AccountEvent]) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, dl)
			return nil
		}
		c.Logger = quietLogger()
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer d.Close(ctx)
	opened := openAndFlush(t, d)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("dead letters: %+v, want one", got)
	}
	dl := got[0]
	if dl.Key != "acct-1" || dl.Attempts != 1 || !errors.Is(dl.Err, errRefused) {
		t.Fatalf("dead letter: %+v", dl)
	}
	if ev, ok := dl.Event.(ledger.AccountOpened); !ok || ev != opened {
		t.Fatalf("dead-lettered event: %#v, want %#v", dl.Event, opened)
	}
}

// TestParkedEventsAreEntityEvents parks an account through the generated
// dispatcher and reads the park back through its operator methods.
func TestParkedEventsAreEntityEvents(t *testing.T) {
	d, err := ledger.NewAccountDispatcher(refusingBook{}, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer d.Close(ctx)
	opened := openAndFlush(t, d)
	keys, err := d.ParkedKeys(ctx)
	if err != nil || len(keys) != 1 || len(keys["Account"]) != 1 || keys["Account"][0].Key != "acct-1" {
		t.Fatalf("parked keys: %v, %v", keys, err)
	}
	events, err := d.ParkedEvents(ctx, "Account", "acct-1")
	if err != nil || len(events) != 1 {
		t.Fatalf("parked events: %+v, %v", events, err)
	}
	if ev, ok := events[0].Event.(ledger.AccountOpened); !ok || ev != opened || events[0].Attempts != 1 {
		t.Fatalf("parked event: %+v, want %#v after one attempt", events[0], opened)
	}
	if _, err := d.ParkedEvents(ctx, "Account/nobody", "acct-1"); err == nil {
		t.Fatal("parked events of a subscriber that does not exist")
	}
	if n, err := d.Discard(ctx, "acct-1"); err != nil || n != 1 {
		t.Fatalf("discard: %d, %v", n, err)
	}
	if err := d.Replay(ctx, "acct-1"); !errors.Is(err, runtime.ErrNotParked) {
		t.Fatalf("replay after discard: %v", err)
	}
}
