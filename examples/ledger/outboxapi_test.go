package main

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// inTx runs fn in a transaction of s, committed when fn succeeds.
func inTx(t *testing.T, s *sqlstore.Store, fn func(tx *sql.Tx) error) error {
	t.Helper()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestGeneratedOutbox: the generated outbox numbers each key's events from
// its seed, stamps the version into the event it stores, numbers an entity
// without a version too, and refuses what it cannot write.
func TestGeneratedOutbox(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	if _, err := ledger.NewAccountOutbox(nil); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("an outbox without a store: %v", err)
	}
	accounts, err := ledger.NewAccountOutbox(s)
	if err != nil {
		t.Fatal(err)
	}
	var versions []uint64
	err = inTx(t, s, func(tx *sql.Tx) error {
		if err := accounts.Seed(ctx, tx, "a-1", 41); err != nil {
			return err
		}
		for _, e := range []ledger.AccountEvent{ledger.Deposited{AccountID: "a-1", Amount: 5}, &ledger.Withdrew{AccountID: "a-1", Amount: 2}} {
			v, err := accounts.PublishTx(ctx, tx, e)
			if err != nil {
				return err
			}
			versions = append(versions, v)
		}
		return nil
	})
	if err != nil || len(versions) != 2 || versions[0] != 42 || versions[1] != 43 {
		t.Fatalf("versions %v, %v; want 42 and 43 after a seed of 41", versions, err)
	}
	events, err := s.OutboxEvents(ctx, accounts.Entity(), "a-1", 0, 0)
	if err != nil || len(events) != 2 {
		t.Fatalf("stored %d events, %v", len(events), err)
	}
	e, err := ledger.AccountCodec{}.Decode(events[1].Event.Name, events[1].Event.Data)
	if w, ok := e.(ledger.Withdrew); err != nil || !ok || w.Version != 43 || w.Amount != 2 {
		t.Fatalf("the stored event decodes to %#v, %v: want Withdrew with its version stamped", e, err)
	}
	for _, bad := range []ledger.AccountEvent{ledger.Deposited{Amount: 1}, nil, (*ledger.Deposited)(nil)} {
		if err := inTx(t, s, func(tx *sql.Tx) error { _, err := accounts.PublishTx(ctx, tx, bad); return err }); !errors.Is(err, runtime.ErrInvalidEvent) {
			t.Errorf("PublishTx(%#v): %v, want ErrInvalidEvent", bad, err)
		}
	}
	if err := inTx(t, s, func(tx *sql.Tx) error { return accounts.Seed(ctx, tx, "a-1", 7) }); !errors.Is(err, sqlstore.ErrOutboxSeeded) {
		t.Fatalf("seeding a key with events: %v", err)
	}

	// An entity without a version field: numbered for ordering only.
	hooks, err := ledger.NewWebhookOutbox(s)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []uint64
	for range 2 {
		if err := inTx(t, s, func(tx *sql.Tx) error {
			v, err := hooks.PublishWebhookQueuedTx(ctx, tx, ledger.WebhookQueued{EndpointID: 7, URL: "https://example.com/hook"})
			numbers = append(numbers, v)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(numbers) != 2 || numbers[0] != 1 || numbers[1] != 2 {
		t.Fatalf("webhook numbers %v, want 1 and 2", numbers)
	}
	if events, err := s.OutboxEvents(ctx, hooks.Entity(), "7", 0, 0); err != nil || len(events) != 2 {
		t.Fatalf("webhook events under key 7: %d, %v", len(events), err)
	}
}
