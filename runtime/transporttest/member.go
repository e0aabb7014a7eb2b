package transporttest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// errKilled is what a handler of a killed member returns: its process is
// gone, so it applies nothing.
var errKilled = errors.New("transporttest: the member was killed")

// member is one consuming process: a transport's consumer feeding an
// engine of its own, with its logs and metrics.
type member struct {
	name    string
	c       Consumer
	engine  *runtime.Engine[string, Event]
	target  *watched
	metrics *metricstest.Provider
	logs    *logs // the consumer's
	elogs   *logs // the engine's
	net     *netfault.Net

	dead    atomic.Bool // killed: nothing more is applied or reported
	ended   atomic.Bool // closed or killed by the test
	runDone chan struct{}
	runErr  error
}

// memberSpec says how to build a member.
type memberSpec struct {
	name string
	// maxInFlight is ConsumerOptions.MaxInFlight.
	maxInFlight int
	// handle handles an event; nil applies it to the book.
	handle func(ctx context.Context, m *member, e Event) error
	// engine adjusts the engine's configuration.
	engine func(*runtime.Config[string, Event])
	// quiet keeps its logs out of a failed test's report.
	quiet bool
	// net is ConsumerOptions.Net.
	net *netfault.Net
}

// start builds a member on st and runs its consumer; it is killed when the
// test ends if the test did not close or kill it.
func (s *suite) start(t *testing.T, st Stream, b *book, spec memberSpec) *member {
	t.Helper()
	m := &member{name: spec.name, metrics: metricstest.New(), logs: newLogs(), elogs: newLogs(), net: spec.net, runDone: make(chan struct{})}
	m.c = st.Consumer(t, ConsumerOptions{
		Name:          spec.name,
		MaxInFlight:   spec.maxInFlight,
		Logger:        m.logs.logger(),
		MeterProvider: m.metrics,
		Net:           spec.net,
	})
	if m.c == nil {
		t.Fatal("Stream.Consumer returned nil")
	}
	handle := spec.handle
	if handle == nil {
		handle = func(ctx context.Context, m *member, e Event) error {
			defer b.begin(ctx, e)()
			if m.dead.Load() {
				return errKilled
			}
			b.apply(m.name, e)
			return nil
		}
	}
	var target *watched
	rc := runtime.Config[string, Event]{
		Name:      spec.name,
		MaxActive: 16,
		Retry:     runtime.Retry{Attempts: 1},
		Logger:    m.elogs.logger(),
		OnOutcome: func(key string, tag uint64, o runtime.Outcome) {
			if m.dead.Load() {
				return // the process is gone: nothing is reported
			}
			target.outcome(tag, o)
			m.c.OnOutcome(key, tag, o)
		},
	}
	if spec.engine != nil {
		spec.engine(&rc)
	}
	e, err := runtime.New(func(ctx context.Context, _ string, ev Event) error {
		if m.dead.Load() {
			return errKilled
		}
		return handle(ctx, m, ev)
	}, rc)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	m.engine = e
	target = watch(transport.EngineTarget(e), runtime.EngineForTransport(e).ParksInMemory())
	m.target = target
	go func() {
		m.runErr = m.c.Run(context.Background(), target)
		close(m.runDone)
	}()
	t.Cleanup(func() {
		if !m.ended.Load() {
			m.kill(t, s.timeout)
		}
		if t.Failed() && !spec.quiet {
			m.logs.dump(t, m.name+"'s consumer")
			m.elogs.dump(t, m.name+"'s engine")
		}
	})
	return m
}

// close stops the member cleanly (the consumer drains, then the engine
// closes) and fails t unless both succeed.
func (m *member) close(t *testing.T, timeout time.Duration) {
	t.Helper()
	m.ended.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := m.c.Close(ctx); err != nil {
		t.Errorf("%s: consumer Close: %v", m.name, err)
	}
	select {
	case <-m.runDone:
		if m.runErr != nil {
			t.Errorf("%s: Run after Close returned %v, want nil", m.name, m.runErr)
		}
	case <-ctx.Done():
		t.Errorf("%s: Run did not return within %v of Close", m.name, timeout)
	}
	if err := m.engine.Close(ctx); err != nil {
		t.Errorf("%s: engine Close: %v", m.name, err)
	}
}

// kill stops the member as a crash would: its handlers apply nothing more
// and its outcomes are no longer reported, its engine stops at once
// (running handlers are cancelled), then the transport's Kill cuts the
// consumer's connections.
func (m *member) kill(t *testing.T, timeout time.Duration) {
	t.Helper()
	m.ended.Store(true)
	m.dead.Store(true)
	_ = m.engine.Close(transport.DoneContext())
	m.c.Kill()
	select {
	case <-m.runDone:
	case <-time.After(timeout):
		t.Errorf("%s: Run did not return within %v of Kill", m.name, timeout)
	}
}

// exited returns Run's result if it returned.
func (m *member) exited() (bool, error) {
	select {
	case <-m.runDone:
		return true, m.runErr
	default:
		return false, nil
	}
}
