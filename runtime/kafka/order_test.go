package kafka_test

import (
	"context"
	"testing"
	"time"
)

// Per-key order across 12 partitions and two consumers of one group, the
// second joining mid-stream: no event of a key is handled before its
// predecessor, every event is applied, and the rebalance re-runs nothing
// (the revoked partitions were drained before their commit).
func TestOrderTwoConsumers(t *testing.T) {
	c := newCluster(t, 12)
	ks := keys(60)
	const perKey = 30
	b := newBook(len(ks) * perKey)
	handler := func(who string) func(context.Context, string, ev) error {
		return func(_ context.Context, _ string, e ev) error {
			b.apply(who, e)
			return nil
		}
	}
	a := startMember(t, c, "g", memberOpts{handler: handler("a")})
	produce(t, c, ks, 1, perKey/2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.WaitGroupStable(ctx, "g", 1); err != nil {
		t.Fatal(err)
	}
	m2 := startMember(t, c, "g", memberOpts{handler: handler("b")})
	if _, err := c.WaitGroupStable(ctx, "g", 2); err != nil {
		t.Fatal(err)
	}
	produce(t, c, ks, perKey/2+1, perKey)
	b.Wait(t, 30*time.Second)
	a.stop(t)
	m2.stop(t)

	applied, dups, skips, by := b.Snapshot()
	if len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
	if dups != 0 {
		t.Errorf("%d events ran twice across the rebalance", dups)
	}
	if applied != len(ks)*perKey {
		t.Errorf("applied %d events, want %d", applied, len(ks)*perKey)
	}
	if by["b"] == 0 {
		t.Errorf("the second consumer handled nothing: %v", by)
	}
	t.Logf("applied %d (a %d, b %d)", applied, by["a"], by["b"])
}
