package groupcommit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

func TestNewRefusesABadConfig(t *testing.T) {
	if _, err := groupcommit.New[*fakeTx](nil, "ns", calm()); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("nil store: %v, want ErrInvalidConfig", err)
	}
	for _, cfg := range []groupcommit.Config{{MaxEvents: -1}, {Linger: -1}, {MaxWork: -1}, {MaxGroups: -1}, {MaxRetries: -1}} {
		if _, err := groupcommit.New[*fakeTx](newFakeStore(), "ns", cfg); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Fatalf("%+v: %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestDoRefusesBadArguments(t *testing.T) {
	h := newHarness(t, calm())
	if err := h.c.Do(context.Background(), "k", 1, nil); err == nil {
		t.Fatal("nil work accepted")
	}
	if err := h.c.Do(context.Background(), "k", 0, apply("k", 1)); err == nil {
		t.Fatal("a work of no events accepted")
	}
	if groups, _, _, _, _, _ := h.store.history(); len(groups) != 0 {
		t.Fatalf("refused calls began groups %v", groups)
	}
}

func TestOneKeyTwiceAtOnceRunsInTwoGroups(t *testing.T) {
	h := newHarness(t, calm())
	release, plugged := h.plug("plug")
	first := h.doQueued("k", 1, apply("k", 1))
	second := h.doQueued("k", 1, apply("k", 1, 2))
	other := h.doQueued("other", 1, apply("other", 1))
	release()
	for _, d := range []<-chan error{first, second, other, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, _, _, _, _ := h.store.history()
	if len(groups) != 3 || len(groups[1]) != 2 || len(groups[2]) != 1 || groups[2][0] != "k" {
		t.Fatalf("groups %v, want [plug] [k other] [k]", groups)
	}
	if v := h.store.version("k"); v != 2 {
		t.Fatalf("k at version %d, want 2", v)
	}
}

// A work's Result that leaves the version unchanged writes nothing for the
// key, and the rest of the transaction still commits.
func TestAnUnchangedKeyIsNotWritten(t *testing.T) {
	h := newHarness(t, calm())
	var writes []durable.KeyWrite
	h.store.commitHook = func(w []durable.KeyWrite) error { writes = w; return nil }
	skip := runtime.Skip("duplicate")
	err := h.c.Do(context.Background(), "k", 1, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		return groupcommit.Result{Write: read, Verdict: skip}, nil
	})
	if !errors.Is(err, skip) {
		t.Fatalf("Do returned %v, want the work's verdict", err)
	}
	if len(writes) != 0 {
		t.Fatalf("writes %v for an unchanged key", writes)
	}
}

func TestMaxGroupsRunsGroupsAtOnce(t *testing.T) {
	cfg := calm()
	cfg.MaxGroups = 2
	h := newHarness(t, cfg)
	release, plugged := h.plug("plug")
	// A second group begins and commits while the plug's is open.
	if err := h.c.Do(context.Background(), "x", 1, apply("x", 1)); err != nil {
		t.Fatal(err)
	}
	if s := h.c.Stats(); s.Open < 1 || s.Committed != 1 {
		t.Fatalf("stats %+v, want the plug's group open and x's committed", s)
	}
	release()
	if err := wait(t, plugged); err != nil {
		t.Fatal(err)
	}
	if vx, vp := h.store.version("x"), h.store.version("plug"); vx != 1 || vp != 1 {
		t.Fatalf("versions x %d, plug %d; want 1, 1", vx, vp)
	}
}
