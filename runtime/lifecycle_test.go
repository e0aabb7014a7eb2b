package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

func TestCloseDrainsEverything(t *testing.T) {
	r := newRecorder()
	e, err := runtime.New(r.handle, runtime.Config[string, ev]{MaxActive: 4, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		if err := e.Submit(ctx, fmt.Sprintf("k%d", i%10), ev{Seq: i, Sleep: 50 * time.Microsecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.Stats()
	if s.Handled != 200 || s.Pending != 0 {
		t.Fatalf("stats after Close: %+v", s)
	}
	if err := e.Submit(ctx, "k0", ev{}); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	if err := e.Replay(ctx, "k0"); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Replay after Close: %v", err)
	}
	if err := e.Close(ctx); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	checkInvariant(t, e.Stats())
}

func TestCloseGivesUpAndSaysWhatIsLeft(t *testing.T) {
	r := gated()
	e, err := runtime.New(r.handle, runtime.Config[string, ev]{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for seq := 1; seq <= 3; seq++ {
		if err := e.Submit(ctx, "stuck", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	<-r.started
	cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	err = e.Close(cctx) // the gated handler returns when its context is cancelled
	var ce *runtime.CloseError
	if !errors.As(err, &ce) || ce.Pending != 3 || ce.Keys != 1 || ce.Sample[0] != "stuck" {
		t.Fatalf("Close: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close error must wrap ctx's error: %v", err)
	}
	checkInvariant(t, e.Stats())
}

func TestNoLaneRemainsAfterDraining(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	ctx := context.Background()
	for i := 0; i < 5000; i++ {
		if err := e.Submit(ctx, fmt.Sprintf("key-%d", i), ev{Seq: 1, Fail: i % 2}); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	if s := e.Stats(); s.Lanes != 0 || s.Handled != 5000 {
		t.Fatalf("lanes left after draining: %+v", s)
	}
	if top := e.TopBacklog(10); len(top) != 0 {
		t.Fatalf("backlog after draining: %+v", top)
	}
}

func TestTopicIsolatesSubscribers(t *testing.T) {
	slow := gated()
	fast := newRecorder()
	topic := runtime.NewTopic[string, ev]()
	ctx := context.Background()
	defer topic.Close(ctx)
	if _, err := topic.Subscribe(slow.handle, runtime.Config[string, ev]{Name: "slow", Logger: discardLogger()}); err != nil {
		t.Fatal(err)
	}
	fastEngine, err := topic.Subscribe(fast.handle, runtime.Config[string, ev]{Name: "fast", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 10; seq++ {
		if err := topic.Publish(ctx, "k", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	<-slow.started
	flush(t, fastEngine) // the fast subscriber finishes while the slow one is stuck on its first event
	if got := fmt.Sprint(fast.seqs("k")); got != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("fast subscriber handled %s", got)
	}
	if got := slow.seqs("k"); len(got) != 0 {
		t.Fatalf("slow subscriber handled %v", got)
	}
	go slow.release(10)
	flush(t, topic)
	if got := fmt.Sprint(slow.seqs("k")); got != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("slow subscriber handled %s", got)
	}
}

func TestTopicPublishReportsRefusals(t *testing.T) {
	topic := runtime.NewTopic[string, ev]()
	ctx := context.Background()
	r := newRecorder()
	if err := topic.Publish(ctx, "k", ev{}); !errors.Is(err, runtime.ErrNoSubscribers) {
		t.Fatalf("publish without subscribers: %v", err)
	}
	a, _ := topic.Subscribe(r.handle, runtime.Config[string, ev]{Name: "a", Logger: discardLogger()})
	if _, err := topic.Subscribe(r.handle, runtime.Config[string, ev]{Name: "b", Logger: discardLogger()}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	err := topic.Publish(ctx, "k", ev{})
	if !errors.Is(err, runtime.ErrClosed) || !errContains(err, "a: ") {
		t.Fatalf("publish with one closed subscriber: %v", err)
	}
	if err := topic.Close(ctx); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("topic close joins the closed subscriber's error: %v", err)
	}
}

func errContains(err error, s string) bool {
	return err != nil && len(s) > 0 && contains(err.Error(), s)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestInvalidConfigs(t *testing.T) {
	h := newRecorder().handle
	for name, cfg := range map[string]runtime.Config[string, ev]{
		"negative max active":      {MaxActive: -1},
		"per-key above total":      {Backlog: runtime.Backlog{PerKey: 10, Total: 5}},
		"timeout policy no wait":   {Backlog: runtime.Backlog{WhenFull: runtime.BlockThenReject}},
		"unknown backlog policy":   {Backlog: runtime.Backlog{WhenFull: 99}},
		"initial above max":        {Retry: runtime.Retry{Initial: time.Second, Max: time.Millisecond}},
		"multiplier below one":     {Retry: runtime.Retry{Multiplier: 0.5}},
		"negative attempts":        {Retry: runtime.Retry{Attempts: -1}},
		"negative timeout":         {Timeout: -time.Second},
		"dead letter without sink": {OnExhausted: runtime.SendToDeadLetter},
		"unknown exhaustion":       {OnExhausted: 42},
	} {
		if _, err := runtime.New(h, cfg); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := runtime.New[string, ev](nil, runtime.Config[string, ev]{}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("nil handler: %v", err)
	}
}
