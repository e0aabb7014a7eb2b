package outbox_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/outbox"
)

// The console's actions on a relay's stopped keys: its partitions name
// them; RetryKey lets a parked key flow (the next round sends it) and
// DiscardKey drops a retrying key's events; each shows at once in
// TransportStatus. A key that flows, or another entity's, is refused.
func TestOperatorRetriesAndDiscardsStoppedKeys(t *testing.T) {
	ctx := t.Context()
	s := sqliteBackend(t).handle(t)
	entity := entityName(t)
	writeAll(t, s, entity, []string{"a", "b", "c"}, 2)
	var fixed atomic.Bool
	log := newDeliveries()
	r := newRelay(t, s, entity, &recorder{log: log, refuse: func(_ context.Context, e event) error {
		switch {
		case e.Key == "b":
			return errors.New("busy")
		case e.Key == "c" && !fixed.Load():
			return runtime.Permanent(errors.New("forbidden"))
		}
		return nil
	}}, func(c *outbox.Config[string, event]) { c.Backoff.Initial = time.Hour })
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	var op inspect.OutboxOperator = r
	st := r.TransportStatus()
	if len(st.Partitions) != 2 || st.Partitions[0].Key != "c" || st.Partitions[0].Entity != entity || st.Partitions[1].Key != "b" {
		t.Fatalf("partitions %+v, want c parked and b retrying, with their entity and key", st.Partitions)
	}
	if _, err := op.RetryKey(ctx, entity, "a"); !errors.Is(err, runtime.ErrNotParked) {
		t.Fatalf("retry of a key that flows: %v", err)
	}
	if _, err := op.DiscardKey(ctx, "Other", "b"); !errors.Is(err, inspect.ErrNotFound) {
		t.Fatalf("discard in another entity's outbox: %v", err)
	}
	fixed.Store(true)
	res, err := op.RetryKey(ctx, entity, "c")
	if err != nil || !res.Done || !strings.Contains(res.Message, "flows again") {
		t.Fatalf("retry c: %+v %v", res, err)
	}
	res, err = op.DiscardKey(ctx, entity, "b")
	if err != nil || res.Events != 2 || !strings.Contains(res.Message, "discarded 2 events") || !strings.Contains(res.Message, "gap before version 3") {
		t.Fatalf("discard b: %+v %v", res, err)
	}
	if st := r.TransportStatus(); len(st.Partitions) != 0 {
		t.Fatalf("partitions after the actions: %+v", st.Partitions)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := perKey(log.all()); len(got["c"]) != 2 || len(got["b"]) != 0 {
		t.Fatalf("sent after the actions: %v, want c's 2 events and none of b", got)
	}
}
