package transporttest

import (
	"testing"
	"time"
)

// Applied records what the handlers of a transport's own tests applied,
// across its consumers, like a shared database: per key the last applied
// Seq, an event applied only when it is its key's next one (as a version
// guard does). An event that comes again after it was applied counts as a
// duplicate; one that comes before its predecessor was applied is a skip
// (order broken, or an event lost). It is the record the suite keeps of
// its own consumers, for tests that wait for a known number of events. It
// is safe for concurrent use.
//
// Where Guarded is the chaos tests' database (poison events, fencing),
// Applied serves the transports' plain scenarios (order, kills, cut-offs,
// dead letters).
type Applied struct {
	b    *book
	want int
}

// NewApplied returns an empty record that Wait waits on until want events
// are applied.
func NewApplied(want int) *Applied {
	return &Applied{b: newBook(), want: want}
}

// Apply records that who (a consumer's name) handled the event of key
// numbered seq.
func (a *Applied) Apply(who, key string, seq int) {
	a.b.apply(who, Event{Key: key, Seq: seq})
}

// Snapshot returns how many events were applied, how many came again, the
// skips, and how many events each consumer applied.
func (a *Applied) Snapshot() (applied, dups int, skips []string, byWho map[string]int) {
	st := a.b.state()
	return st.applied, st.dups, st.skips, st.byMember
}

// Wait waits until the wanted number of events is applied, or fails t
// after d, saying how far it got.
func (a *Applied) Wait(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-a.b.reached(a.want):
	case <-time.After(d):
		applied, dups, skips, _ := a.Snapshot()
		t.Fatalf("only %d of %d events applied (%d duplicates, skips %v)", applied, a.want, dups, skips)
	}
}
