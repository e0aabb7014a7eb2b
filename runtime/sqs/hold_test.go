package sqs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	oq "github.com/ordergen/ordergen/runtime/sqs"
)

// A group parked in memory while its message reaches SQS's 12 hours of
// invisibility (a few seconds here) goes back to the queue: the consumer
// withdraws it from the park, warns, counts it, and the message comes
// again. Fixed by then, it is applied, then the group's later events, in
// order; meanwhile the visibility was extended.
func TestParkedGroupGoesBackAtMaxHold(t *testing.T) {
	q := newQueues(t, "hold", 2*time.Second)
	var fixed atomic.Bool
	logs := &logSink{}
	var mu sync.Mutex
	applied := []int{}
	m := q.start(t, memberOpts{
		cfg: func(c *oq.Config[ev]) {
			oq.SetMaxHold(c, 4*time.Second)
			c.DrainTimeout = 500 * time.Millisecond
			c.Logger = slogTo(logs)
		},
		handler: func(_ context.Context, _ string, e ev) error {
			if !fixed.Load() {
				return runtime.Permanent(errors.New("broken until fixed"))
			}
			mu.Lock()
			defer mu.Unlock()
			applied = append(applied, e.Seq)
			return nil
		},
	})
	p := q.producer(t)
	for seq := 1; seq <= 3; seq++ {
		if err := p.Send(context.Background(), "k", ev{"k", seq}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the parked group to go back to the queue", func() bool {
		return m.c.Stats().GroupsGivenBack.MaxHold > 0
	})
	if !logs.has("reached the end of their lease") {
		t.Errorf("no warning that the parked group went back: %q", logs.all())
	}
	if s := m.c.Stats(); s.Extensions == 0 {
		t.Errorf("no visibility extended while the message was parked: %+v", s)
	}
	fixed.Store(true)
	eventually(t, 30*time.Second, "the group's events to be applied", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(applied) >= 3
	})
	m.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if len(applied) != 3 || applied[0] != 1 || applied[1] != 2 || applied[2] != 3 {
		t.Errorf("applied %v, want [1 2 3]", applied)
	}
}

// logSink keeps the log messages a consumer wrote.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) has(part string) bool {
	for _, m := range l.all() {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

func (l *logSink) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// eventually polls cond until it holds, or fails the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond) // polling: no signal exists for these states
	}
}
