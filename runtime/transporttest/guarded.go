package transporttest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// Guarded is the shared database of a transport's chaos test: the handler
// of every consumer the test starts and stops at random. Per key it keeps
// the last applied Seq and applies an event only when it is the next one
// (as a version guard does), and it records what must never happen: an
// event handled before its predecessor was applied (order broken, or an
// event lost), and a handler starting for a key while another handler of
// that key runs with a context nobody cancelled (a key's work not fenced).
// About one event in forty is poison (Poison): it fails for good until the
// test's operator fixes its key (Fix). It is safe for concurrent use.
type Guarded struct {
	mu         sync.Mutex
	last       map[string]int
	running    map[string][]context.Context
	dups       int
	violations []string
	fixedUpTo  map[string]int // per key, the poison events up to this Seq are fixed
}

// NewGuarded returns an empty database.
func NewGuarded() *Guarded {
	return &Guarded{last: map[string]int{}, running: map[string][]context.Context{}, fixedUpTo: map[string]int{}}
}

// Poison reports whether the event of key numbered seq fails for good
// until its key is fixed: about one in forty, the same in every run.
func Poison(key string, seq int) bool {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", key, seq)
	return h.Sum32()%40 == 0
}

// Handle is the consumers' handler of the event of key numbered seq: it
// fails a poison event permanently (runtime.Permanent), applies nothing
// when ctx has ended (the handler was fenced), and otherwise applies the
// event if it is the key's next, counts it as delivered again if it was
// applied before, and records a violation if it comes early.
func (g *Guarded) Handle(ctx context.Context, key string, seq int) error {
	g.mu.Lock()
	for _, other := range g.running[key] {
		if other.Err() == nil {
			g.violations = append(g.violations, fmt.Sprintf("key %s: event %d started while an unfenced handler of the key ran", key, seq))
		}
	}
	g.running[key] = append(g.running[key], ctx)
	broken := Poison(key, seq) && seq > g.fixedUpTo[key]
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		rs := g.running[key]
		for i, c := range rs {
			if c == ctx {
				g.running[key] = append(rs[:i], rs[i+1:]...)
				break
			}
		}
	}()
	if broken {
		return runtime.Permanent(errors.New("poison"))
	}
	if err := ctx.Err(); err != nil {
		return err // fenced: apply nothing
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch last := g.last[key]; {
	case seq == last+1:
		g.last[key] = seq
	case seq <= last:
		g.dups++ // delivered again: the guard skips it
	default:
		g.violations = append(g.violations, fmt.Sprintf("key %s: event %d handled after %d", key, seq, last))
	}
	return nil
}

// Fix fixes the poison events of key up to Seq upTo: they apply when they
// run again (the operator's fix before a replay).
func (g *Guarded) Fix(key string, upTo int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fixedUpTo[key] = upTo
}

// Backlog is how many of the events produced (per key, the last Seq
// published) are not applied yet.
func (g *Guarded) Backlog(produced map[string]int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for k, p := range produced {
		n += p - g.last[k]
	}
	return n
}

// Applied returns each key's last applied Seq.
func (g *Guarded) Applied() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.last)
}

// Dups is the number of events delivered again after they were applied.
func (g *Guarded) Dups() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dups
}

// Report fails t with each violation recorded (the first 20, and how many
// more).
func (g *Guarded) Report(t testing.TB) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, v := range g.violations {
		if i == 20 {
			t.Errorf("... %d more", len(g.violations)-20)
			break
		}
		t.Error(v)
	}
}

// Done reports whether every event produced (per key, the last Seq
// published) is applied.
func (g *Guarded) Done(produced map[string]int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, n := range produced {
		if g.last[k] != n {
			return false
		}
	}
	return true
}
