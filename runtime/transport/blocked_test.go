package transport_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// recordHandler is a slog.Handler that gives each record to f.
type recordHandler struct{ f func(slog.Record) }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.f(r)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// Whoever reads the intake's log that parked messages block it, and then
// its stats (or metrics), sees it blocked. (The conformance suite's
// MemoryParkHoldsThenResumes waited for that log and then read the
// metric, which the intake set only after logging: it timed out in CI.)
func TestBlockedIsInTheStatsWhenItIsLogged(t *testing.T) {
	var core atomic.Pointer[transport.KeyIntake[string, ev, string]]
	seen := make(chan transport.Blocked, 1)
	logger := slog.New(recordHandler{func(r slog.Record) {
		if strings.Contains(r.Message, "takes no more messages") {
			seen <- core.Load().Stats().Blocked
		}
	}})
	e, err := runtime.New(func(context.Context, string, ev) error { return runtime.Permanent(errors.New("broken")) },
		runtime.Config[string, ev]{OnOutcome: func(k string, tag uint64, o runtime.Outcome) { core.Load().OnOutcome(k, tag, o) },
			Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := transport.NewKeyIntake[string](transport.KeyConfig[ev, string]{System: "test", MaxInFlight: 1, EndTimeout: time.Second, Logger: logger,
		Settle: func(string, transport.Settlement) {}, DeadLetter: func(_ transport.Message[ev, string], done func(error)) { done(nil) }})
	if err != nil {
		t.Fatal(err)
	}
	core.Store(c)
	if err := c.Start(transport.EngineTarget(e)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = c.Shutdown(context.Background())
		_ = e.Close(context.Background())
	}()
	if c.Reserve(context.Background(), nil, 1) != 1 {
		t.Fatal("no room in an empty intake")
	}
	if err := c.Receive(msg("m1", 1)); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != transport.BlockedParked {
		t.Fatalf("the stats said %v while the intake logged that parked messages block it", got)
	}
}
