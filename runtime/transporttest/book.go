package transporttest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// book records what handlers applied, over every consumer of a test, as a
// shared database with a version guard would: per key the last Seq
// applied; an event is applied only when it is the next one. It finds what
// the transport got wrong: an event applied before its predecessor (a
// skip: lost or reordered), two handlers of one key at once (an overlap;
// unfenced when the one running still had a live context: nobody told it
// that its message went elsewhere), and counts the events delivered again
// (duplicates, which the guard skips and an at-least-once transport may
// deliver after a crash).
type book struct {
	mu        sync.Mutex
	last      map[string]int
	running   map[string][]context.Context // the contexts of the handlers of the key running now
	applied   int
	dups      int
	skips     []string
	overlaps  []string
	unfenced  []string
	byMember  map[string]int
	cancelled int // handlers that saw their context end
	waiters   []bookWaiter
}

type bookWaiter struct {
	n  int
	ch chan struct{}
}

func newBook() *book {
	return &book{last: map[string]int{}, running: map[string][]context.Context{}, byMember: map[string]int{}}
}

// begin notes that a handler of e's key started with ctx; the function it
// returns notes its end.
func (b *book) begin(ctx context.Context, e Event) (end func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	others := b.running[e.Key]
	if len(others) > 0 {
		b.overlaps = append(b.overlaps, fmt.Sprintf("%s: %d handlers at once (one of them on %d)", e.Key, len(others)+1, e.Seq))
		for _, o := range others {
			if o.Err() == nil {
				b.unfenced = append(b.unfenced, fmt.Sprintf("%s: a handler began on %d while another ran with a live context", e.Key, e.Seq))
				break
			}
		}
	}
	b.running[e.Key] = append(others, ctx)
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		rs := b.running[e.Key]
		for i, c := range rs {
			if c == ctx {
				b.running[e.Key] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(b.running[e.Key]) == 0 {
			delete(b.running, e.Key)
		}
	}
}

// apply applies e for who, under the guard, and reports whether it was the
// next event of its key.
func (b *book) apply(who string, e Event) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch last := b.last[e.Key]; {
	case e.Seq == last+1:
		b.last[e.Key] = e.Seq
		b.applied++
		b.byMember[who]++
		b.wake()
		return true
	case e.Seq <= last:
		b.dups++
	default:
		b.skips = append(b.skips, fmt.Sprintf("%s: %d after %d", e.Key, e.Seq, last))
	}
	return false
}

// giveUp records that e will never be applied (its handler failed for good
// and the runtime dead-lettered it): its key's next event is expected next.
func (b *book) giveUp(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last[e.Key] == e.Seq-1 {
		b.last[e.Key] = e.Seq
	}
}

// sawCancel counts a handler whose context ended while it ran.
func (b *book) sawCancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancelled++
}

// wake closes the channels of the waiters whose count is reached; b.mu is
// held.
func (b *book) wake() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if b.applied >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	b.waiters = kept
}

// reached returns a channel closed once n events were applied.
func (b *book) reached(n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{})
	if b.applied >= n {
		close(ch)
		return ch
	}
	b.waiters = append(b.waiters, bookWaiter{n: n, ch: ch})
	return ch
}

// lastOf returns the last Seq applied for key.
func (b *book) lastOf(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last[key]
}

type bookState struct {
	applied, dups, cancelled  int
	skips, overlaps, unfenced []string
	byMember                  map[string]int
}

func (b *book) state() bookState {
	b.mu.Lock()
	defer b.mu.Unlock()
	by := make(map[string]int, len(b.byMember))
	for k, v := range b.byMember {
		by[k] = v
	}
	return bookState{
		applied: b.applied, dups: b.dups, cancelled: b.cancelled,
		skips: append([]string(nil), b.skips...), overlaps: append([]string(nil), b.overlaps...),
		unfenced: append([]string(nil), b.unfenced...), byMember: by,
	}
}

// wait waits until n events were applied, or fails t after timeout.
func (b *book) wait(t *testing.T, n int, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-b.reached(n):
	case <-time.After(timeout):
		st := b.state()
		t.Fatalf("%s: only %d of %d events applied after %v (%d duplicates; skips %v; overlaps %v)",
			what, st.applied, n, timeout, st.dups, first(st.skips), first(st.overlaps))
	}
}

// check fails t for every skip and overlap, and unless want events were
// applied with dups duplicates at most (-1: any).
func (b *book) check(t *testing.T, want, maxDups int) bookState {
	t.Helper()
	st := b.state()
	if len(st.skips) > 0 {
		t.Errorf("%d events applied before their predecessor (lost or reordered): %v", len(st.skips), first(st.skips))
	}
	if len(st.overlaps) > 0 {
		t.Errorf("%d times two handlers of one key ran at once: %v", len(st.overlaps), first(st.overlaps))
	}
	if st.applied != want {
		t.Errorf("applied %d events, want %d", st.applied, want)
	}
	if maxDups >= 0 && st.dups > maxDups {
		t.Errorf("%d events delivered again after they were applied, want at most %d", st.dups, maxDups)
	}
	return st
}

// first returns the first few of s, for messages.
func first(s []string) []string {
	if len(s) > 5 {
		return append(s[:5:5], fmt.Sprintf("... %d more", len(s)-5))
	}
	return s
}
