package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// textCodec encodes string events as themselves.
type textCodec struct{}

func (textCodec) Encode(e string) (string, []byte, error) { return "text", []byte(e), nil }
func (textCodec) Decode(name string, data []byte) (string, error) {
	if name != "text" {
		return "", fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	return string(data), nil
}

// recorder is an engine handler that records what it handled and fails
// permanently on events starting with "bad" until fixed.
type recorder struct {
	mu      sync.Mutex
	fixed   bool
	handled []string
}

func (r *recorder) handle(_ context.Context, key string, e string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(e, "bad") && !r.fixed {
		return runtime.Permanent(errors.New("cannot apply " + e))
	}
	r.handled = append(r.handled, key+":"+e)
	return nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.handled)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startEngine(t *testing.T, parks runtime.ParkStore[string, durable.RawEvent], r *recorder) *runtime.Engine[string, string] {
	t.Helper()
	e, err := runtime.New(r.handle, runtime.Config[string, string]{
		Name:   "restart",
		Parks:  durable.EncodedParks[string, string](parks, textCodec{}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestParkedKeySurvivesRestart parks a key, stops the engine and closes the
// store, then starts again on a new handle: the key is still parked, a new
// event joins its park, and a replay applies everything in order.
func TestParkedKeySurvivesRestart(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		ns := "restart-" + randomSuffix(t)
		first := b.handle(t)
		r := &recorder{}
		e := startEngine(t, first.Parks(ns), r)
		for _, ev := range []string{"e1", "bad2", "e3"} {
			if err := e.Submit(ctx, "k", ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Submit(ctx, "other", "o1"); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}

		// The restarted process.
		s := b.handleClosed(t)
		r2 := &recorder{}
		e2 := startEngine(t, s.Parks(ns), r2)
		defer e2.Close(context.Background())
		keys, err := e2.ParkedKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].Key != "k" || keys[0].Events != 2 || !strings.Contains(keys[0].Reason, "cannot apply bad2") {
			t.Fatalf("parked after restart: %+v, want k with 2 events and its reason", keys)
		}
		if st := e2.Stats(); st.ParkedKeys != 1 || st.Parked != 2 {
			t.Fatalf("restarted engine counts %d parked keys, %d parked events", st.ParkedKeys, st.Parked)
		}
		if err := e2.Submit(ctx, "k", "e4"); err != nil {
			t.Fatal(err)
		}
		if err := e2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r2.seen(); len(got) != 0 {
			t.Fatalf("a parked key's new event was handled: %v", got)
		}
		events, err := e2.ParkedEvents(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ev := range events {
			names = append(names, ev.Event)
		}
		if strings.Join(names, " ") != "bad2 e3 e4" {
			t.Fatalf("park after restart and a new event: %v, want bad2 e3 e4", names)
		}
		r2.mu.Lock()
		r2.fixed = true
		r2.mu.Unlock()
		if err := e2.Replay(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(r2.seen(), " "); got != "k:bad2 k:e3 k:e4" {
			t.Fatalf("replay handled %q, want k:bad2 k:e3 k:e4", got)
		}
		if keys, err := s.Parks(ns).Keys(ctx); err != nil || len(keys) != 0 {
			t.Fatalf("after replay the store still has %+v (%v)", keys, err)
		}
	})
}

// TestCorruptParkedEventIsAnError: a row the codec cannot read fails the
// read with an error naming it; nothing panics.
func TestCorruptParkedEventIsAnError(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		ns := "corrupt-" + randomSuffix(t)
		raw := s.Parks(ns)
		if err := raw.Append(ctx, "k", "r", []runtime.ParkedEvent[durable.RawEvent]{{Event: durable.RawEvent{Name: "Teleported", Data: []byte("{")}}}); err != nil {
			t.Fatal(err)
		}
		typed := durable.EncodedParks[string, string](raw, textCodec{})
		if _, err := typed.Read(ctx, "k", 0, 0); !errors.Is(err, durable.ErrUnknownEventType) || !strings.Contains(err.Error(), "key k") {
			t.Fatalf("read of a corrupt event: %v", err)
		}
		ints := durable.EncodedParks[int64, string](raw, textCodec{})
		if _, err := ints.Keys(ctx); !errors.Is(err, runtime.ErrInvalidEvent) {
			t.Fatalf("a key that is not an int64: %v", err)
		}
	})
}
