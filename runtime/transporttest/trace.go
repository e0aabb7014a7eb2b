package transporttest

import (
	"context"
	"errors"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/oteltrace"
	"github.com/ordergen/ordergen/runtime/transport"
)

// traceAcross: a writer's span reaches the handlers. The producer writes
// the trace context of the writer's span to each message; each attempt of
// the consumer's engine is a span of the writer's trace, a child of the
// writer's span and linked to it, which the handler's context carries; a
// failed attempt's span records the retry; and a message delivered again
// after its consumer was killed is handled in a span that links to the
// writer's span again.
func (s *suite) traceAcross(t *testing.T) {
	st := s.stream(t, 2)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	sink := st.Producer(t, ProducerOptions{})
	traced, ok := sink.(interface{ Trace(transport.Injector) })
	if !ok {
		t.Fatalf("the producer (%T) has no Trace method: it is not a transport.OrderedSink", sink)
	}
	traced.Trace(oteltrace.New(tp))

	// The handlers' spans, as their contexts carry them, by member and key.
	var mu sync.Mutex
	seen := map[string]trace.SpanContext{}
	failed := false
	blocked := make(chan struct{})
	// Keys ok and retry handled by a (or again by b, had a not settled
	// them), and key again by b.
	done := make(chan struct{}, 8)
	again := make(chan struct{})
	var againOnce sync.Once
	handle := func(ctx context.Context, m *member, e Event) error {
		mu.Lock()
		seen[m.name+"/"+e.Key] = trace.SpanContextFromContext(ctx)
		fail := e.Key == "retry" && !failed
		failed = failed || fail
		mu.Unlock()
		switch {
		case fail:
			return errors.New("transporttest: the first attempt fails")
		case e.Key == "again" && m.name == "a":
			close(blocked)
			<-ctx.Done() // until the kill: the message is delivered again
			return ctx.Err()
		}
		if e.Key == "again" {
			againOnce.Do(func() { close(again) })
		} else {
			done <- struct{}{}
		}
		return nil
	}
	tracing := func(name string) memberSpec {
		return memberSpec{name: name, handle: handle, engine: func(c *runtime.Config[string, Event]) {
			c.Tracer = oteltrace.New(tp) // a tracer per consumer: tags are its own
			c.Retry = runtime.Retry{Attempts: 2}
		}}
	}
	a := s.start(t, st, newBook(), tracing("a"))

	ctx, write := tp.Tracer("transporttest").Start(context.Background(), "write")
	for _, k := range []string{"ok", "retry", "again"} {
		if err := sink.Send(ctx, k, Event{Key: k, Seq: 1}); err != nil {
			t.Fatalf("send %s: %v", k, err)
		}
	}
	write.End()
	w := write.SpanContext()
	s.await(t, blocked, "the handler of key again to run")
	for range 2 {
		s.await(t, done, "keys ok and retry to be handled")
	}
	a.kill(t, s.timeout)
	b := s.start(t, st, newBook(), tracing("b"))
	s.await(t, again, "key again to be handled again after the kill")
	b.close(t, s.timeout)

	// The spans of the attempts that ended, by member and key.
	spans := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		if sp.InstrumentationScope().Name != oteltrace.ScopeName {
			continue
		}
		var key string
		for _, kv := range sp.Attributes() {
			if kv.Key == oteltrace.AttrKey {
				key = kv.Value.AsString()
			}
		}
		name := sp.Name()[len("process "):]
		spans[name+"/"+key] = append(spans[name+"/"+key], sp)
	}
	for _, who := range []string{"a/ok", "a/retry", "b/again"} {
		got := spans[who]
		if len(got) == 0 {
			t.Errorf("%s: no span ended (spans %v)", who, spans)
			continue
		}
		last := got[len(got)-1]
		sc := last.SpanContext()
		if sc.TraceID() != w.TraceID() || last.Parent().SpanID() != w.SpanID() {
			t.Errorf("%s: span in trace %s under %s, want the writer's %s under %s", who, sc.TraceID(), last.Parent().SpanID(), w.TraceID(), w.SpanID())
		}
		if ls := last.Links(); len(ls) != 1 || ls[0].SpanContext.SpanID() != w.SpanID() || ls[0].SpanContext.TraceID() != w.TraceID() {
			t.Errorf("%s: links %v, want one to the writer's span %s", who, ls, w.SpanID())
		}
		mu.Lock()
		if h := seen[who]; h.SpanID() != sc.SpanID() {
			t.Errorf("%s: the handler's context carries span %s, want its attempt's %s", who, h.SpanID(), sc.SpanID())
		}
		mu.Unlock()
		if o := outcomeOf(last); o != runtime.Handled.String() {
			t.Errorf("%s: outcome %q, want %q", who, o, runtime.Handled)
		}
	}
	if got := spans["a/retry"]; len(got) == 2 {
		first := got[0]
		if outcomeOf(first) != "retried" || len(first.Events()) == 0 || first.Events()[len(first.Events())-1].Name != oteltrace.EventRetry {
			t.Errorf("retry: the failed attempt's span has outcome %q and events %v, want retried with %s", outcomeOf(first), first.Events(), oteltrace.EventRetry)
		}
	} else {
		t.Errorf("retry: %d spans, want 2 (the failed attempt and the retry)", len(got))
	}
}

// outcomeOf returns a span's oteltrace.AttrOutcome.
func outcomeOf(sp sdktrace.ReadOnlySpan) string {
	for _, kv := range sp.Attributes() {
		if kv.Key == oteltrace.AttrOutcome {
			return kv.Value.AsString()
		}
	}
	return ""
}
