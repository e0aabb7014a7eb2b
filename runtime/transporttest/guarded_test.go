package transporttest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime/transporttest"
)

// captured is a testing.TB that keeps the errors reported to it.
type captured struct {
	testing.TB
	errs []string
}

func (c *captured) Helper()           {}
func (c *captured) Error(args ...any) { c.errs = append(c.errs, fmt.Sprint(args...)) }
func (c *captured) Errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// Guarded applies each key's next event, counts those delivered again,
// reports one that comes early, and fails a poison event until its key is
// fixed.
func TestGuarded(t *testing.T) {
	ctx := context.Background()
	g := transporttest.NewGuarded()
	for seq := 1; seq <= 2; seq++ {
		if err := g.Handle(ctx, "a", seq); err != nil {
			t.Fatalf("a %d: %v", seq, err)
		}
	}
	if !g.Done(map[string]int{"a": 2}) || g.Backlog(map[string]int{"a": 5}) != 3 {
		t.Errorf("applied %v: want a up to 2", g.Applied())
	}
	_ = g.Handle(ctx, "a", 1)
	if g.Dups() != 1 {
		t.Errorf("%d delivered again, want 1", g.Dups())
	}
	var clean captured
	g.Report(&clean)
	if len(clean.errs) != 0 {
		t.Errorf("in-order events reported: %v", clean.errs)
	}
	_ = g.Handle(ctx, "a", 4) // 3 is missing
	var early captured
	g.Report(&early)
	if len(early.errs) != 1 || !strings.Contains(early.errs[0], "event 4 handled after 2") {
		t.Errorf("an early event reported as %v", early.errs)
	}

	// A poison event fails until its key is fixed.
	key, seq := "p", 0
	for s := 1; seq == 0; s++ {
		if transporttest.Poison(key, s) {
			seq = s
		}
	}
	for s := 1; s < seq; s++ {
		if err := g.Handle(ctx, key, s); err != nil {
			t.Fatalf("%s %d: %v", key, s, err)
		}
	}
	if err := g.Handle(ctx, key, seq); err == nil {
		t.Fatalf("poison event %s %d applied", key, seq)
	}
	g.Fix(key, seq)
	if err := g.Handle(ctx, key, seq); err != nil || g.Applied()[key] != seq {
		t.Errorf("fixed poison event %s %d: %v, applied %v", key, seq, err, g.Applied())
	}

	// A handler whose context ended applies nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g.Handle(cctx, key, seq+1); err == nil || g.Applied()[key] != seq {
		t.Errorf("a fenced handler: %v, applied %v", err, g.Applied())
	}
}
