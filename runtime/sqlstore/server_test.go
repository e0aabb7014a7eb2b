package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
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

// TestCancelledRequestIsNotCarriedOut: a request withdrawn before a
// service took it up is finished as cancelled and never carried out; one
// that a service took up cannot be withdrawn. Unfinished lists the
// requests still to finish.
func TestCancelledRequestIsNotCarriedOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		entity := "Cancel" + randomSuffix(t)
		r := &recorder{}
		e := startEngine(t, s.Parks(entity), r)
		defer e.Close(context.Background())
		if err := e.Submit(ctx, "a", "bad1"); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		namespaces, err := s.Namespaces(ctx) // the parked key's
		if err != nil || !slices.Contains(namespaces, entity) || !slices.IsSorted(namespaces) {
			t.Fatalf("Namespaces: %v, %v; want %s among them, sorted", namespaces, err, entity)
		}
		withdrawn, err := s.Request(ctx, entity, "a", sqlstore.Discard)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := s.Request(ctx, entity, "a", sqlstore.Replay)
		if err != nil {
			t.Fatal(err)
		}
		unfinished := func() []int64 {
			t.Helper()
			list, err := s.Unfinished(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range list {
				if r.Namespace == entity {
					ids = append(ids, r.ID)
				}
			}
			return ids
		}
		if got := unfinished(); len(got) != 2 || got[0] != withdrawn.ID || got[1] != kept.ID {
			t.Fatalf("Unfinished before: %v; want %d and %d, oldest first", got, withdrawn.ID, kept.ID)
		}
		got, err := s.CancelRequest(ctx, withdrawn.ID, "not taken up within 2s")
		if err != nil || !got.Cancelled() || got.Pending() || got.Result != "cancelled: not taken up within 2s" {
			t.Fatalf("CancelRequest: %+v, %v", got, err)
		}
		if again, err := s.CancelRequest(ctx, withdrawn.ID, "twice"); err != nil || again.Result != got.Result {
			t.Fatalf("a second cancel: %+v, %v; want the first result and no error", again, err)
		}
		r.mu.Lock()
		r.fixed = true
		r.mu.Unlock()
		srv := &sqlstore.Server[string]{Store: s, Entity: entity, Operator: e, Logger: quiet()}
		if n, err := srv.ServeOnce(ctx); err != nil || n != 1 {
			t.Fatalf("ServeOnce: %d requests, %v; want only the one not cancelled", n, err)
		}
		if done, _ := s.RequestByID(ctx, kept.ID); done.Result != "replayed" {
			t.Fatalf("the request not cancelled: %+v", done)
		}
		if got := strings.Join(r.seen(), " "); got != "a:bad1" {
			t.Fatalf("handled %q: the key was replayed, not discarded", got)
		}
		if _, err := s.CancelRequest(ctx, kept.ID, "too late"); !errors.Is(err, sqlstore.ErrRequestTaken) {
			t.Fatalf("cancel of a request carried out: %v, want ErrRequestTaken", err)
		}
		if got := unfinished(); len(got) != 0 {
			t.Fatalf("Unfinished after: %v", got)
		}
		if _, err := s.CancelRequest(ctx, -1, "none"); !errors.Is(err, sqlstore.ErrNoRequest) {
			t.Fatalf("cancel of an unknown request: %v", err)
		}
	})
}

// onlyParks is an Operator that acts on parked keys only.
type onlyParks struct{ sqlstore.Operator[string] }

// TestServerActsOnRunningKeys: cancel-attempt and park-now requests reach
// the service's running attempts; an Operator that cannot act on them
// finishes them with an error that says so.
func TestServerActsOnRunningKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		entity := "Run" + randomSuffix(t)
		started, release := make(chan string, 8), make(chan struct{})
		e, err := runtime.New(func(ctx context.Context, key, _ string) error {
			started <- key
			if key == "deaf" {
				<-release // ignores its context
				return nil
			}
			<-ctx.Done()
			return context.Cause(ctx)
		}, runtime.Config[string, string]{Name: entity, Timeout: time.Hour, Retry: runtime.Retry{Attempts: 1},
			Parks: durable.EncodedParks[string, string](s.Parks(entity), textCodec{}), Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		defer e.Close(context.Background())
		defer free()
		for _, key := range []string{"stuck", "deaf", "deaf"} {
			if err := e.Submit(ctx, key, "e"); err != nil {
				t.Fatal(err)
			}
		}
		<-started
		<-started
		ask := func(key string, action sqlstore.Action) int64 {
			t.Helper()
			r, err := s.Request(ctx, entity, key, action)
			if err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		cancel, park, idle := ask("stuck", sqlstore.CancelAttempt), ask("deaf", sqlstore.ParkNow), ask("idle", sqlstore.CancelAttempt)
		again := ask("deaf", sqlstore.ParkNow) // parked already: nothing pending
		if _, err := (&sqlstore.Server[string]{Store: s, Entity: entity, Operator: e, Logger: quiet()}).ServeOnce(ctx); err != nil {
			t.Fatal(err)
		}
		for _, want := range []struct {
			id     int64
			result string
		}{{cancel, "cancelled the running attempt"}, {park, "parked 2 events now"}, {idle, "error: "}, {again, "error: "}} {
			got, err := s.RequestByID(ctx, want.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Pending() || !strings.HasPrefix(got.Result, want.result) {
				t.Fatalf("request %d: %+v, want result %q", want.id, got, want.result)
			}
		}
		refusal := ask("deaf", sqlstore.ParkNow)
		plain := &sqlstore.Server[string]{Store: s, Entity: entity, Operator: onlyParks{e}, Logger: quiet()}
		if _, err := plain.ServeOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.RequestByID(ctx, refusal); !strings.Contains(got.Result, "cannot park-now") {
			t.Fatalf("a request the operator cannot carry out: %+v", got)
		}
		free() // the withdrawn handler returns: Flush waits for it
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		keys, err := e.ParkedKeys(ctx)
		if err != nil || len(keys) != 2 {
			t.Fatalf("parked %+v %v, want stuck (cancelled, out of attempts) and deaf", keys, err)
		}
		for _, k := range keys {
			if k.Key == "stuck" && !strings.Contains(k.Reason, "operator request") {
				t.Fatalf("stuck's reason %q does not name the request", k.Reason)
			}
		}
	})
}
