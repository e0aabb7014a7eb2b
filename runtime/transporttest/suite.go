package transporttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// Run runs the conformance suite against the transport h plugs in. Each
// test makes streams of its own (Harness.NewStream), with names unique to
// the run, so a broker shared with other runs does not disturb it.
func Run(t *testing.T, h Harness) {
	s := newSuite(t, h)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"PerKeyOrderAcrossConsumers", s.perKeyOrder},
		{"KillMidStreamLosesNothing", s.killMidStream},
		{"LeaseExtendedForSlowHandler", s.leaseExtended},
		{"PoisonMessageToDeadLetter", s.poisonToDeadLetter},
		{"FailedHandlerToDeadLetter", s.failedHandlerToDeadLetter},
		{"BoundedIntake", s.boundedIntake},
		{"FullLanesHoldMessages", s.fullLanes},
		{"GracefulDrainOnClose", s.gracefulDrain},
		{"DurableParkSettles", s.durablePark},
		{"MemoryParkHoldsThenResumes", s.memoryPark},
		{"RefusesUnsettleableSubscribers", s.refusesUnsettleable},
		{"LeaseLostWhileCutOff", s.leaseLostWhileCutOff},
		{"StopWhileCutOff", s.stopWhileCutOff},
		{"ProducerConnectionKilled", s.producerCut},
		{"TraceFromWriterToHandler", s.traceAcross},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.parallel(t)
			tc.fn(t)
		})
	}
}

// parallel lets t run beside its siblings when the harness allows it
// (Harness.Parallel).
func (s *suite) parallel(t *testing.T) {
	if s.h.Parallel {
		t.Parallel()
	}
}

type suite struct {
	h       Harness
	run     string
	timeout time.Duration
	scale   float64

	mu    sync.Mutex
	count int // streams made, for unique names
}

func newSuite(t *testing.T, h Harness) *suite {
	t.Helper()
	switch {
	case h.NewStream == nil:
		t.Fatal("transporttest: Harness.NewStream is nil")
	case h.ParkBlocked == nil:
		t.Fatal("transporttest: Harness.ParkBlocked is nil")
	case !h.Limits.NoLeases && h.Lease <= 0:
		t.Fatal("transporttest: Harness.Lease must be set unless Limits.NoLeases")
	}
	s := &suite{h: h, run: runID(t), timeout: h.Timeout, scale: h.Scale}
	if s.timeout == 0 {
		s.timeout = 60 * time.Second
	}
	if s.scale == 0 {
		s.scale = 1
	}
	return s
}

func runID(t *testing.T) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// stream makes a stream of units units for t.
func (s *suite) stream(t *testing.T, units int) Stream {
	t.Helper()
	s.mu.Lock()
	s.count++
	n := s.count
	s.mu.Unlock()
	st := s.h.NewStream(t, StreamSpec{Name: fmt.Sprintf("ogtt-%s-%d", s.run, n), Units: units})
	if st == nil {
		t.Fatal("Harness.NewStream returned nil")
	}
	return st
}

// afterClose is the most duplicates a check after a clean close allows:
// none, or any when the broker may redeliver what was acknowledged just
// before the close (Limits.RedeliversAfterClose).
func (s *suite) afterClose() int {
	if s.h.Limits.RedeliversAfterClose {
		return -1
	}
	return 0
}

// n scales a count, keeping at least min.
func (s *suite) n(count, least int) int {
	return max(least, int(math.Round(float64(count)*s.scale)))
}

// keys returns n keys named prefix000, prefix001, ...
func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

// publisher publishes events through a stream's producer.
type publisher struct {
	sink transport.Sink[string, Event]
}

func (s *suite) publisher(t *testing.T, st Stream) *publisher {
	t.Helper()
	return s.publisherOf(t, st, ProducerOptions{})
}

// publisherOf is publisher with options.
func (s *suite) publisherOf(t *testing.T, st Stream, o ProducerOptions) *publisher {
	t.Helper()
	sink := st.Producer(t, o)
	if sink == nil {
		t.Fatal("Stream.Producer returned nil")
	}
	return &publisher{sink: sink}
}

// publish sends events from..to (inclusive) of every key, in order per
// key, from several goroutines at once, and waits for the broker's
// answers.
func (p *publisher) publish(t *testing.T, ks []string, from, to int) {
	t.Helper()
	p.events(t, ks, func(key string) []Event {
		out := make([]Event, 0, to-from+1)
		for seq := from; seq <= to; seq++ {
			out = append(out, Event{key, seq})
		}
		return out
	})
}

// events sends what each key's function returns, in order per key, keys
// in parallel, through the sink's asynchronous path when it has one.
func (p *publisher) events(t *testing.T, ks []string, of func(key string) []Event) {
	t.Helper()
	if err := p.send(ks, of); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// try is events for a goroutine other than the test's: it reports a
// failure with t.Errorf and returns false.
func (p *publisher) try(t *testing.T, ks []string, of func(key string) []Event) bool {
	if err := p.send(ks, of); err != nil {
		t.Errorf("publish: %v", err)
		return false
	}
	return true
}

func (p *publisher) send(ks []string, of func(key string) []Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const workers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ks); i += workers {
				for _, e := range of(ks[i]) {
					transport.SendKeyed[string, Event](ctx, p.sink, e, nil, fail)
				}
			}
		})
	}
	wg.Wait()
	if a, ok := p.sink.(transport.AsyncSink[string, Event]); ok {
		fail(a.Flush(ctx))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d failed sends, the first: %w", len(errs), errs[0])
	}
	return nil
}

// one publishes one event and waits for the broker's answer.
func (p *publisher) one(t *testing.T, e Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.sink.Send(ctx, e.Key, e); err != nil {
		t.Fatalf("publish %+v: %v", e, err)
	}
}

// await waits for ch, or fails t saying what did not happen.
func (s *suite) await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(s.timeout):
		t.Fatalf("timed out after %v waiting for %s", s.timeout, what)
	}
}

// eventually polls cond until it holds, or fails t after the suite's
// timeout: for states a transport reports only when asked (metrics).
func (s *suite) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(s.timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", s.timeout, what)
		}
		<-tick.C
	}
}
