package sqs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// clientVia returns an SQS client of the emulator whose connections pass
// n.
func clientVia(t *testing.T, n *netfault.Net) *sqs.Client {
	t.Helper()
	tr := &http.Transport{DialContext: n.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return sqs.New(sqs.Options{
		BaseEndpoint: aws.String(endpoint(t)),
		Region:       "us-east-1",
		Credentials:  aws.AnonymousCredentials{},
		HTTPClient:   &http.Client{Transport: tr},
	})
}

// newNet returns a Net closed when the test ends.
func newNet(t *testing.T) *netfault.Net {
	n := netfault.New()
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// fenced records the handlers running per key, across consumers, and
// what must never happen: a handler of a key starting while another one of
// the key runs with a context nobody cancelled.
type fenced struct {
	mu         sync.Mutex
	running    map[string][]context.Context
	violations []string
}

func (f *fenced) begin(ctx context.Context, e ev) (end func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running == nil {
		f.running = map[string][]context.Context{}
	}
	for _, other := range f.running[e.Key] {
		if other.Err() == nil {
			f.violations = append(f.violations, fmt.Sprintf("%s/%d started while a handler of its key ran with a live context", e.Key, e.Seq))
		}
	}
	f.running[e.Key] = append(f.running[e.Key], ctx)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		rs := f.running[e.Key]
		for i, c := range rs {
			if c == ctx {
				f.running[e.Key] = append(rs[:i], rs[i+1:]...)
				break
			}
		}
	}
}

func (f *fenced) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.violations) > 0 {
		t.Errorf("%d handlers overlapped with an unfenced one: %v", len(f.violations), f.violations)
	}
}

// A consumer cut off from SQS (its connections reset, or stalled) while
// its handler outlives the visibility timeout: its extensions fail and
// count as ExtensionErrors and in the metric's "request" errors, never as
// Extensions; before the visibility SQS last confirmed ends, the group is
// given up and the handler cancelled with a cause wrapping
// transport.ErrLeaseLost, so that when SQS gives the message to another
// consumer, no handler of the group still runs with a live context. The
// other consumer then applies the group's events in order.
//
// At 88ccaa5 the handler was never cancelled (the failed extensions moved
// the expiry forward and counted as Extensions): the other consumer's
// handler started beside it.
func TestLapsedVisibilityCancelsTheHandler(t *testing.T) {
	for _, fault := range []string{"cut", "stall"} {
		t.Run(fault, func(t *testing.T) {
			q := newQueues(t, "lapse-"+fault, 2*time.Second)
			n := newNet(t)
			var f fenced
			started := make(chan struct{})
			causes := make(chan error, 1)
			var mu sync.Mutex
			var applied []string
			done := make(chan struct{})
			apply := func(who string, e ev) {
				mu.Lock()
				defer mu.Unlock()
				applied = append(applied, fmt.Sprintf("%s:%d", who, e.Seq))
				if len(applied) == 3 {
					close(done)
				}
			}
			metrics := metricstest.New()
			a := q.start(t, memberOpts{
				cfg: func(c *oq.Config[ev]) {
					c.Client = clientVia(t, n)
					c.MeterProvider = metrics
				},
				handler: func(ctx context.Context, _ string, e ev) error {
					defer f.begin(ctx, e)()
					if e.Seq == 1 {
						close(started)
						<-ctx.Done() // longer than the visibility, unless cancelled
						causes <- context.Cause(ctx)
						return ctx.Err()
					}
					apply("a", e)
					return nil
				},
			})
			p := q.producer(t)
			for seq := 1; seq <= 3; seq++ {
				if err := p.Send(context.Background(), "k", ev{"k", seq}); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("the handler did not start")
			}
			before := a.c.Stats().Extensions
			if fault == "cut" {
				n.Cut()
			} else {
				n.Stall()
			}
			b := q.start(t, memberOpts{handler: func(ctx context.Context, _ string, e ev) error {
				defer f.begin(ctx, e)()
				apply("b", e)
				return nil
			}})
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				mu.Lock()
				t.Fatalf("the group's events were not all applied: %v", applied)
			}
			f.check(t)
			var cause error
			select {
			case cause = <-causes:
			case <-time.After(30 * time.Second):
				t.Fatal("the cut-off handler was never cancelled")
			}
			if !errors.Is(cause, transport.ErrLeaseLost) || !errors.Is(cause, transport.ErrOwnershipEnded) {
				t.Errorf("the handler's context.Cause is %v, want an error wrapping transport.ErrLeaseLost", cause)
			}
			s := a.c.Stats()
			if s.Extensions != before {
				t.Errorf("Extensions went from %d to %d while every extension failed", before, s.Extensions)
			}
			if s.ExtensionErrors == 0 || s.ExtensionsRefused != 0 {
				t.Errorf("ExtensionErrors %d, ExtensionsRefused %d: want the failed extensions counted, none refused", s.ExtensionErrors, s.ExtensionsRefused)
			}
			if s.GroupsGivenBack.VisibilityLapsed != 1 {
				t.Errorf("GroupsGivenBack %+v, want one group given back as its visibility lapsed", s.GroupsGivenBack)
			}
			m := metrics.Collect()
			if v, _ := m.Sum(oq.MetricExtensions, meter.Attribute{Key: meter.AttrErrorType, Value: "request"}); v != float64(s.ExtensionErrors) {
				t.Errorf("metric %s{error.type=request} is %v, want %d", oq.MetricExtensions, v, s.ExtensionErrors)
			}
			var confirmed float64
			for _, pt := range m.Points(oq.MetricExtensions) {
				if _, failed := pt.Attributes[meter.AttrErrorType]; !failed {
					confirmed += pt.Value
				}
			}
			if confirmed != float64(s.Extensions) {
				t.Errorf("metric %s without error.type is %v, want Extensions %d", oq.MetricExtensions, confirmed, s.Extensions)
			}
			n.Resume()
			b.stop(t)
			a.stop(t)
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(applied) != "[b:1 b:2 b:3]" {
				t.Errorf("applied %v, want the group's three events in order by the other consumer", applied)
			}
		})
	}
}
