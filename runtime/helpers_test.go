package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// ev is the test event: the key's sequence number and a behaviour.
type ev struct {
	Seq int
	// Fail makes the first Fail attempts fail.
	Fail int
	// Permanent makes every attempt fail permanently while the recorder's
	// fault for the key is on.
	Permanent bool
	// Panic makes the first attempt panic.
	Panic bool
	// Sleep is how long the handler works on it.
	Sleep time.Duration
}

// recorder is a handler that records, per key, the sequence numbers it
// handled and whether two events of a key ever ran at once.
type recorder struct {
	mu         sync.Mutex
	handled    map[string][]int
	attempts   map[string]int // key/seq -> attempts
	running    map[string]bool
	overlap    []string
	faultFixed map[string]bool
	gate       chan struct{} // when set, each call waits for a token
	started    chan string   // when set, each call announces its key
}

func newRecorder() *recorder {
	return &recorder{
		handled:    map[string][]int{},
		attempts:   map[string]int{},
		running:    map[string]bool{},
		faultFixed: map[string]bool{},
	}
}

func (r *recorder) handle(ctx context.Context, key string, e ev) error {
	r.mu.Lock()
	if r.running[key] {
		r.overlap = append(r.overlap, fmt.Sprintf("%s/%d", key, e.Seq))
	}
	r.running[key] = true
	id := fmt.Sprintf("%s/%d", key, e.Seq)
	r.attempts[id]++
	attempt := r.attempts[id]
	fixed := r.faultFixed[key]
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running[key] = false
		r.mu.Unlock()
	}()
	if r.started != nil {
		r.started <- key
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.Sleep > 0 {
		time.Sleep(e.Sleep) // simulated work, not synchronisation
	}
	if e.Panic && attempt == 1 {
		panic("boom " + id)
	}
	if attempt <= e.Fail {
		return fmt.Errorf("transient failure %d of %s", attempt, id)
	}
	if e.Permanent && !fixed {
		return runtime.Permanent(fmt.Errorf("cannot apply %s", id))
	}
	r.mu.Lock()
	r.handled[key] = append(r.handled[key], e.Seq)
	r.mu.Unlock()
	return nil
}

func (r *recorder) fix(key string) {
	r.mu.Lock()
	r.faultFixed[key] = true
	r.mu.Unlock()
}

func (r *recorder) seqs(key string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.handled[key]...)
}

func (r *recorder) overlaps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.overlap...)
}

// fastRetry is a retry policy for tests: quick and deterministic.
var fastRetry = runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond, Multiplier: 2, NoJitter: true}

func mustNew(t *testing.T, h runtime.Handler[string, ev], cfg runtime.Config[string, ev]) *runtime.Engine[string, ev] {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	e, err := runtime.New(h, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e
}

func flush(t *testing.T, e interface{ Flush(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// checkInvariant asserts the accounting invariant on a quiescent engine.
func checkInvariant(t *testing.T, s runtime.Stats) {
	t.Helper()
	in := s.Accepted + s.Restored
	out := s.Handled + s.Skipped + uint64(s.Parked) + s.DeadLettered + s.Dropped + s.Discarded + s.Conflated + s.Withdrawn + uint64(s.Pending)
	if in != out {
		t.Fatalf("accounting: accepted %d + restored %d != handled %d + skipped %d + parked %d + dead-lettered %d + dropped %d + discarded %d + conflated %d + withdrawn %d + pending %d",
			s.Accepted, s.Restored, s.Handled, s.Skipped, s.Parked, s.DeadLettered, s.Dropped, s.Discarded, s.Conflated, s.Withdrawn, s.Pending)
	}
}

func isSorted(seqs []int) bool {
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			return false
		}
	}
	return true
}
