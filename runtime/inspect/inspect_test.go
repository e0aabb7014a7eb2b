package inspect_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type note struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// parked returns an engine named Account whose store already holds a park
// for "k": a held event first (no error), then the one that failed.
func parked(t *testing.T) (*runtime.Engine[string, note], inspect.Engines[string, note]) {
	t.Helper()
	parks := runtime.NewMemoryParkStore[string, note]()
	err := parks.Append(t.Context(), "k", "failed 3 attempts: boom", []runtime.ParkedEvent[note]{
		{Event: note{N: 2}, At: time.Now()},
		{Event: note{N: 1, Text: "<b>"}, Err: "boom", Attempts: 3, At: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.New(func(context.Context, string, note) error { return nil },
		runtime.Config[string, note]{Name: "Account", Parks: parks, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	v := inspect.Engines[string, note]{
		Name:    "Account",
		Engines: func() []*runtime.Engine[string, note] { return []*runtime.Engine[string, note]{e} },
		Version: func(_ context.Context, sub, key string) (uint64, error) { return uint64(len(sub + key)), nil },
		State:   func(context.Context, string, string) (string, error) { return "Open", nil },
	}
	return e, v
}

func TestEnginesReportParksAndGuards(t *testing.T) {
	_, v := parked(t)
	ctx := t.Context()
	subs, err := v.Subscribers(ctx, inspect.Query{Top: 5})
	if err != nil || len(subs) != 1 || !subs[0].Live || subs[0].ParkedKeys != 1 || subs[0].ParkedEvents != 2 || subs[0].Limits.OnExhausted != "park" {
		t.Fatalf("subscribers %+v %v", subs, err)
	}
	keys, total, err := v.ParkedKeys(ctx, "Account", 0, 10)
	if err != nil || total != 1 || len(keys) != 1 {
		t.Fatalf("parked keys %+v %d %v", keys, total, err)
	}
	// The event that parked the key is the one with the error, not the
	// held one before it.
	if k := keys[0]; k.Key != "k" || k.Attempts != 3 || k.Error != "boom" || k.Events != 2 || !strings.Contains(k.Reason, "boom") {
		t.Fatalf("parked key %+v", k)
	}
	if keys, total, _ := v.ParkedKeys(ctx, "Account", 1, 10); len(keys) != 0 || total != 1 {
		t.Fatalf("past the end: %+v %d", keys, total)
	}
	events, err := v.ParkedEvents(ctx, "Account", "k", 1, 10)
	if err != nil || len(events) != 1 || events[0].Seq != 2 || events[0].Name != "inspect_test.note" ||
		string(events[0].Data) != `{"n":1,"text":"\u003cb\u003e"}` || events[0].Error != "boom" {
		t.Fatalf("events after 1: %+v %v", events, err)
	}
	k, err := v.Key(ctx, "Account", "k")
	if err != nil || !k.Parked || k.Events != 2 || !k.HasVersion || k.Version != uint64(len("Accountk")) || k.State != "Open" {
		t.Fatalf("key %+v %v", k, err)
	}
	if k, _ := v.Key(ctx, "Account", "other"); k.Parked {
		t.Fatalf("a key that is not parked: %+v", k)
	}
}

func TestEnginesReplayAndDiscardOneSubscriber(t *testing.T) {
	e, v := parked(t)
	ctx := t.Context()
	if _, err := v.Replay(ctx, "Nope", "k"); !errors.Is(err, inspect.ErrNotFound) {
		t.Fatalf("replay in an unknown subscriber: %v", err)
	}
	res, err := v.Discard(ctx, "Account", "k")
	if err != nil || !res.Done || res.Events != 2 || !strings.Contains(res.Message, "discarded 2 events of k in Account") {
		t.Fatalf("discard: %+v %v", res, err)
	}
	if _, err := v.Replay(ctx, "Account", "k"); !errors.Is(err, runtime.ErrNotParked) {
		t.Fatalf("replay of a discarded key: %v", err)
	}
	if st := e.Stats(); st.Discarded != 2 || st.ParkedKeys != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestEnginesRefuseKeysOfTheWrongType(t *testing.T) {
	e, err := runtime.New(func(context.Context, int64, note) error { return nil },
		runtime.Config[int64, note]{Name: "Webhook", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	v := inspect.Engines[int64, note]{Name: "Webhook", Engines: func() []*runtime.Engine[int64, note] { return []*runtime.Engine[int64, note]{e} }}
	if _, err := v.ParkedEvents(t.Context(), "Webhook", "seven", 0, 1); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("a key that is not an integer: %v", err)
	}
	if _, err := v.Discard(t.Context(), "Webhook", "7"); !errors.Is(err, runtime.ErrNotParked) {
		t.Fatalf("discard of an integer key not parked: %v", err)
	}
}
