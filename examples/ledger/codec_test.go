package main

import (
	"encoding/json"
	"errors"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

func TestGeneratedCodecsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	accounts := []ledger.AccountEvent{
		ledger.AccountOpened{AccountID: "a", Version: 1, Owner: "ada", OpenedAt: at},
		ledger.Deposited{AccountID: "a", Version: 2, Amount: 5},
		&ledger.Withdrew{AccountID: "a", Version: 3, Amount: 2}, // pointers encode too
	}
	for _, e := range accounts {
		name, data, err := ledger.AccountCodec{}.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ledger.AccountCodec{}.Decode(name, data)
		if err != nil {
			t.Fatal(err)
		}
		want := e
		if p, ok := e.(*ledger.Withdrew); ok {
			want = *p
		}
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("%s: got %#v, want %#v", name, back, want)
		}
	}
	hook := ledger.WebhookQueued{EndpointID: 7, URL: "https://x", From: netip.MustParseAddr("10.0.0.1"),
		Headers: map[string][]string{"A": {"b"}}, Body: []byte{0, 1}, Deadline: time.Second}
	name, data, err := ledger.WebhookCodec{}.Encode(hook)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := (ledger.WebhookCodec{}).Decode(name, data); err != nil || !reflect.DeepEqual(back, hook) {
		t.Fatalf("webhook: %#v, %v", back, err)
	}
}

// TestGeneratedCodecsUseWireNames: Account keeps the Go names (the
// default); Webhook's schema names its fields in snake_case, and URL
// "target".
func TestGeneratedCodecsUseWireNames(t *testing.T) {
	keys := func(c durable.Codec[ledger.WebhookEvent], e ledger.WebhookEvent) []string {
		t.Helper()
		_, data, err := c.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	got := keys(ledger.WebhookCodec{}, ledger.WebhookQueued{EndpointID: 7, URL: "https://x", From: netip.MustParseAddr("10.0.0.1")})
	want := []string{"body", "deadline", "endpoint_id", "from", "headers", "target"}
	if !slices.Equal(got, want) {
		t.Errorf("webhook wire names %v, want %v", got, want)
	}
	_, data, err := ledger.AccountCodec{}.Encode(ledger.Deposited{AccountID: "a", Version: 2, Amount: 5})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"AccountID":"a","Version":2,"Amount":5}` {
		t.Errorf("account event encoded as %s, want the Go names", data)
	}
	e, err := ledger.WebhookCodec{}.Decode("WebhookQueued", []byte(`{"endpoint_id":7,"target":"https://y"}`))
	if err != nil || e.(ledger.WebhookQueued).URL != "https://y" || e.EventKey() != 7 {
		t.Errorf("decoded %#v, %v", e, err)
	}
}

func TestGeneratedCodecRefusesBadInput(t *testing.T) {
	c := ledger.AccountCodec{}
	if _, _, err := c.Encode(nil); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("nil event: %v", err)
	}
	if _, err := c.Decode("Teleported", []byte(`{}`)); !errors.Is(err, durable.ErrUnknownEventType) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := c.Decode("Deposited", []byte(`{"Amount": "lots"}`)); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("bad bytes: %v", err)
	}
	// Fields from a newer schema are ignored.
	e, err := c.Decode("Deposited", []byte(`{"AccountID":"a","Version":2,"Amount":5,"Memo":"new field"}`))
	if err != nil || e.(ledger.Deposited).Amount != 5 {
		t.Fatalf("newer fields: %#v, %v", e, err)
	}
}
