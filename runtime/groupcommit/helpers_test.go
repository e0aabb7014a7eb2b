package groupcommit_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

// quiet is the logger of tests that expect failures.
var quiet = slog.New(slog.DiscardHandler)

// calm is a Config whose works are never evicted: the tests that do not
// test eviction must not see one on a slow machine.
func calm() groupcommit.Config {
	return groupcommit.Config{Name: "test", MaxWork: time.Hour, Logger: quiet}
}

// harness is a committer over a fake store, which tells the test each key
// it queues.
type harness struct {
	t      *testing.T
	store  *fakeStore
	c      *groupcommit.Committer[*fakeTx]
	queued chan string
}

func newHarness(t *testing.T, cfg groupcommit.Config) *harness {
	t.Helper()
	h := &harness{t: t, store: newFakeStore(), queued: make(chan string, 10000)}
	c, err := groupcommit.New[*fakeTx](h.store, "ns", cfg)
	if err != nil {
		t.Fatal(err)
	}
	groupcommit.OnQueued(c, func(key string) { h.queued <- key })
	h.c = c
	t.Cleanup(func() { _ = c.Close() })
	return h
}

// do runs Do in a goroutine and returns where its error comes.
func (h *harness) do(ctx context.Context, key string, events int, work groupcommit.Work[*fakeTx]) <-chan error {
	done := make(chan error, 1)
	go func() { done <- h.c.Do(ctx, key, events, work) }()
	return done
}

// doQueued runs Do in a goroutine and returns once its key is queued.
func (h *harness) doQueued(key string, events int, work groupcommit.Work[*fakeTx]) <-chan error {
	h.t.Helper()
	done := h.do(context.Background(), key, events, work)
	h.waitQueued(key)
	return done
}

// waitQueued waits until key was queued (keys queued before it are taken
// as read).
func (h *harness) waitQueued(key string) {
	h.t.Helper()
	for k := range h.queued {
		if k == key {
			return
		}
	}
}

// plug starts a Do whose work holds the committer's only transaction until
// release is called: the keys queued meanwhile form the next group in the
// order they came. done is the plug's Do.
func (h *harness) plug(key string) (release func(), done <-chan error) {
	h.t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done = h.do(context.Background(), key, 1, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		once.Do(func() { close(started) }) // it may run again
		<-gate
		return apply(key, read.Version+1)(ctx, tx, read)
	})
	h.waitQueued(key)
	<-started
	return func() { close(gate) }, done
}

// apply is the work of events of key with versions: it applies (tx.Apply)
// each that is the next version, as a version guard does, and writes the
// last applied one.
func apply(key string, versions ...uint64) groupcommit.Work[*fakeTx] {
	return func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		v := read.Version
		for _, ev := range versions {
			if ev != v+1 {
				continue
			}
			if err := tx.Apply(key, ev); err != nil {
				return groupcommit.Result{}, err
			}
			v = ev
		}
		return groupcommit.Result{Write: durable.KeyState{Version: v, State: read.State}}, nil
	}
}

// counted wraps work to count its calls in calls[key] (read by the test
// after the Do returned).
func counted(calls map[string]int, key string, work groupcommit.Work[*fakeTx]) groupcommit.Work[*fakeTx] {
	return func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		calls[key]++
		return work(ctx, tx, read)
	}
}

// wait returns the error that comes on done.
func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	return <-done
}
