package pubsub_test

import (
	"testing"
	"time"
)

// Two consumers of one ordered subscription apply every event once, in
// order per key.
func TestOrderAcrossConsumers(t *testing.T) {
	f := newFake(t)
	ks := keys(20)
	const perKey = 15
	b := newBook(len(ks) * perKey)
	a := f.start(t, memberOpts{handler: b.handler("a")})
	c := f.start(t, memberOpts{handler: b.handler("b")})
	f.produce(t, ks, 1, perKey)
	b.Wait(t, 60*time.Second)
	a.stop(t)
	c.stop(t)
	applied, dups, skips, by := b.Snapshot()
	if len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
	if applied != len(ks)*perKey {
		t.Errorf("applied %d, want %d", applied, len(ks)*perKey)
	}
	t.Logf("applied %d (a %d, b %d), %d duplicates", applied, by["a"], by["b"], dups)
}
