package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// tally is a count that a test can wait on.
type tally struct {
	mu      sync.Mutex
	n       int
	waiters []tallyWaiter
}

type tallyWaiter struct {
	n  int
	ch chan struct{}
}

// count returns the count so far.
func (c *tally) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// after returns a channel closed once the count reached n.
func (c *tally) after(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if c.n >= n {
		close(ch)
		return ch
	}
	c.waiters = append(c.waiters, tallyWaiter{n, ch})
	return ch
}

func (c *tally) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if c.n >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// logSignal is a slog handler that counts the records whose message
// contains a text, so that a test waits for what the consumer logs (a
// partition assigned, paused) instead of sleeping.
type logSignal struct{ counts map[string]*tally }

// newLogSignal returns a signal that counts the records containing each of
// texts.
func newLogSignal(texts ...string) *logSignal {
	l := &logSignal{counts: map[string]*tally{}}
	for _, t := range texts {
		l.counts[t] = new(tally)
	}
	return l
}

func (l *logSignal) logger() *slog.Logger { return slog.New(logHandler{l}) }

// after returns a channel closed once n records containing text (one of
// the texts the signal counts) were logged.
func (l *logSignal) after(text string, n int) <-chan struct{} { return l.counts[text].after(n) }

type logHandler struct{ l *logSignal }

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	for text, c := range h.l.counts {
		if strings.Contains(r.Message, text) {
			c.add()
		}
	}
	return nil
}
func (h logHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logHandler) WithGroup(string) slog.Handler      { return h }

// await waits for ch or fails the test after 30s, saying what it waited
// for.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// submits counts the events a wrapped target handed to every subscriber,
// so that a test waits until a consumer took what it should have.
type submits struct{ tally }

// wrap returns the memberOpts.wrap that counts into s.
func (s *submits) wrap(t transport.Target[ev]) transport.Target[ev] { return counted{t, s} }

type counted struct {
	transport.Target[ev]
	s *submits
}

func (c counted) SubmitTagged(ctx context.Context, e ev, tag uint64, from int) (int, error) {
	n, err := c.Target.SubmitTagged(ctx, e, tag, from)
	if err == nil {
		c.s.add()
	}
	return n, err
}

// journal records, across members and in order, every handler start and
// every application of an event: the test's view of a database without a
// version guard, so that a duplicate or a backwards application shows.
type journal struct {
	mu      sync.Mutex
	starts  []string         // "member key seq", in order
	applied map[string][]int // by key, the seqs applied, in order
	wanted  int
	total   int
	done    chan struct{}
}

func newJournal(want int) *journal {
	return &journal{applied: map[string][]int{}, wanted: want, done: make(chan struct{})}
}

func (j *journal) start(who string, e ev) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.starts = append(j.starts, fmt.Sprintf("%s %s %d", who, e.Key, e.Seq))
}

func (j *journal) apply(e ev) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.applied[e.Key] = append(j.applied[e.Key], e.Seq)
	j.total++
	if j.total == j.wanted {
		close(j.done)
	}
}

// handler returns a handler for who that journals each event it runs.
func (j *journal) handler(who string) runtime.Handler[string, ev] {
	return func(_ context.Context, _ string, e ev) error {
		j.start(who, e)
		j.apply(e)
		return nil
	}
}

// startsOf returns the seqs whose handler who started for key, in order.
func (j *journal) startsOf(who, key string) []int {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []int
	for _, s := range j.starts {
		var w, k string
		var seq int
		if _, err := fmt.Sscan(s, &w, &k, &seq); err == nil && w == who && k == key {
			out = append(out, seq)
		}
	}
	return out
}

// check fails the test unless every key in want was applied exactly once
// per event, 1 to want[key], in order: nothing applied twice, nothing
// applied backwards, nothing lost.
func (j *journal) check(t *testing.T, want map[string]int) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	for key, n := range want {
		got := j.applied[key]
		ok := len(got) == n
		for i := 0; ok && i < n; i++ {
			ok = got[i] == i+1
		}
		if !ok {
			t.Errorf("key %s applied %v, want 1..%d once each in order (handler starts: %v)", key, got, n, j.starts)
		}
	}
}

// fenceRetry is the engine configuration of the fencing tests: an attempt
// cancelled because its partition moved fails, and its retry is where the
// engine serves the withdrawal.
func fenceRetry(rc *runtime.Config[string, ev]) {
	rc.Retry = runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}
}
