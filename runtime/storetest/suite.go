package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Harness says how to reach the store under test.
type Harness struct {
	// Open returns a new handle on the database under test: every handle
	// opened during one Run sees the same data, also after the handles
	// opened before it were closed (for an in-memory store, return the same
	// store every time). The suite closes the handles it opens when they
	// implement io.Closer.
	Open func(t *testing.T) durable.Store
	// Goroutines is how many goroutines race in the concurrency tests.
	// Zero: 16.
	Goroutines int
	// Increments is how far the concurrency tests advance a version. Zero:
	// 200.
	Increments int
}

// Run runs the conformance suite against the store h opens. Each test uses
// namespaces of its own, unique to the run, so a database shared by earlier
// runs (a PostgreSQL server) does not disturb it.
func Run(t *testing.T, h Harness) {
	if h.Goroutines == 0 {
		h.Goroutines = 16
	}
	if h.Increments == 0 {
		h.Increments = 200
	}
	run := runID(t)
	s := suite{h: h, run: run}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"VersionsStartAtZero", s.versionsStartAtZero},
		{"VersionCompareAndSet", s.versionCompareAndSet},
		{"VersionStaleRejected", s.versionStaleRejected},
		{"VersionFullRange", s.versionFullRange},
		{"VersionConcurrentCompareAndSet", s.versionConcurrent},
		{"StateCompareAndSet", s.stateCompareAndSet},
		{"StateConcurrentCompareAndSet", s.stateConcurrent},
		{"NamespacesAreSeparate", s.namespacesSeparate},
		{"ParksEmpty", s.parksEmpty},
		{"ParkAppendAssignsIncreasingSeq", s.parkAppendSeq},
		{"ParkReadsAPageAfterASeq", s.parkPaged},
		{"ParkAppendWithoutEvents", s.parkAppendWithoutEvents},
		{"ParkKeysOldestFirst", s.parkKeysOldestFirst},
		{"ParkRemove", s.parkRemove},
		{"ParkClear", s.parkClear},
		{"ParkOrderAcrossReopen", s.parkReopen},
		{"ParkConcurrentAppends", s.parkConcurrent},
		{"ParkKeepsOddBytes", s.parkOddBytes},
	} {
		t.Run(tc.name, tc.fn)
	}
}

type suite struct {
	h   Harness
	run string
}

// open returns a handle; it is closed when the test ends.
func (s suite) open(t *testing.T) durable.Store {
	t.Helper()
	st := s.h.Open(t)
	if st == nil {
		t.Fatal("Harness.Open returned nil")
	}
	t.Cleanup(func() { closeStore(t, st) })
	return st
}

// closeStore closes st if it can be closed; closing twice must be harmless.
func closeStore(t *testing.T, st durable.Store) {
	t.Helper()
	if c, ok := st.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	}
}

// ns returns a namespace unique to this run and test.
func (s suite) ns(t *testing.T, suffix string) string {
	return s.run + "/" + t.Name() + suffix
}

func runID(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "storetest-" + hex.EncodeToString(b[:])
}

func ctxOf(t *testing.T) context.Context { return t.Context() }

// must returns v through a function that fails t when err is not nil:
// must(f())(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Increment advances key's version in vs by compare-and-set, reading the
// stored version and trying to store the next one, until the stored version
// reaches upTo. It returns the versions this caller stored: among callers
// racing on one key (goroutines, handles or processes), every version from 1
// to upTo must be stored by exactly one of them.
func Increment(ctx context.Context, vs runtime.VersionStore[string], key string, upTo uint64) ([]uint64, error) {
	var won []uint64
	for {
		v, err := vs.Version(ctx, key)
		if err != nil {
			return won, fmt.Errorf("read version: %w", err)
		}
		if v >= upTo {
			return won, nil
		}
		ok, err := vs.CompareAndSet(ctx, key, v, v+1)
		if err != nil {
			return won, fmt.Errorf("compare-and-set %d -> %d: %w", v, v+1, err)
		}
		if ok {
			won = append(won, v+1)
		}
	}
}

// CheckWins reports an error unless the versions won by all racers are
// exactly 1..upTo, each once.
func CheckWins(upTo uint64, wins ...[]uint64) error {
	seen := make(map[uint64]int)
	for _, w := range wins {
		for _, v := range w {
			seen[v]++
		}
	}
	for v := uint64(1); v <= upTo; v++ {
		if seen[v] != 1 {
			return fmt.Errorf("version %d was stored %d times, want exactly once", v, seen[v])
		}
		delete(seen, v)
	}
	for v, n := range seen {
		return fmt.Errorf("version %d beyond %d was stored %d times", v, upTo, n)
	}
	return nil
}
