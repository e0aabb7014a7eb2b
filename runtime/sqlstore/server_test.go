package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// TestServerCarriesOutRequests: requests left in the store are carried out
// once by the service's Server, with their results recorded.
func TestServerCarriesOutRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		entity := "Srv" + randomSuffix(t)
		r := &recorder{}
		e := startEngine(t, s.Parks(entity), r)
		defer e.Close(context.Background())
		for _, ev := range []string{"bad1", "e2"} {
			for _, key := range []string{"a", "b"} {
				if err := e.Submit(ctx, key, ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		replay, err := s.Request(ctx, entity, "a", sqlstore.Replay)
		if err != nil {
			t.Fatal(err)
		}
		discard, err := s.Request(ctx, entity+"/audit", "b", sqlstore.Discard)
		if err != nil {
			t.Fatal(err)
		}
		unparked, err := s.Request(ctx, entity, "never-parked", sqlstore.Replay)
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.Request(ctx, entity+"Other", "a", sqlstore.Replay) // another entity's
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Request(ctx, entity, "a", "rewind"); err == nil {
			t.Fatal("an unknown action was accepted")
		}

		r.mu.Lock()
		r.fixed = true
		r.mu.Unlock()
		srv := &sqlstore.Server[string]{Store: s, Entity: entity, Operator: e, Logger: quiet()}
		replica := &sqlstore.Server[string]{Store: b.handleClosed(t), Entity: entity, Operator: e, Logger: quiet()}
		n, err := srv.ServeOnce(ctx)
		if err != nil || n != 3 {
			t.Fatalf("ServeOnce: %d requests, %v; want 3", n, err)
		}
		if n, err := replica.ServeOnce(ctx); err != nil || n != 0 {
			t.Fatalf("a second replica carried out %d requests again (%v)", n, err)
		}
		for _, want := range []struct {
			id     int64
			result string
		}{{replay.ID, "replayed"}, {discard.ID, "discarded 2 events"}, {unparked.ID, "error: "}} {
			got, err := s.RequestByID(ctx, want.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Pending() || !strings.HasPrefix(got.Result, want.result) {
				t.Fatalf("request %d: %+v, want result %q", want.id, got, want.result)
			}
		}
		if got, _ := s.RequestByID(ctx, other.ID); !got.Pending() || !got.Claimed.IsZero() {
			t.Fatalf("another entity's request was touched: %+v", got)
		}
		if got := strings.Join(r.seen(), " "); got != "a:bad1 a:e2" {
			t.Fatalf("handled %q, want a's replay only", got)
		}
		if _, err := s.RequestByID(ctx, -1); err == nil {
			t.Fatal("an unknown request was found")
		}
		list, err := s.Requests(ctx, 10)
		if err != nil || len(list) < 4 || list[0].ID != other.ID {
			t.Fatalf("Requests: %+v, %v; want the newest first", list, err)
		}
	})
}
