package oteltrace_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/oteltrace"
	"github.com/ordergen/ordergen/runtime/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// event is a versioned event with a type name, as generated events are.
type event struct {
	Key     string
	Version uint64
}

func (e event) EventKey() string     { return e.Key }
func (e event) EventName() string    { return "Deposited" }
func (e event) EventVersion() uint64 { return e.Version }
func newRecorder(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

// outcomes collects an engine's outcomes.
type outcomes struct {
	mu  sync.Mutex
	got []runtime.Outcome
	ch  chan struct{}
}

func newOutcomes() *outcomes { return &outcomes{ch: make(chan struct{}, 16)} }

func (o *outcomes) report(_ string, _ uint64, out runtime.Outcome) {
	o.mu.Lock()
	o.got = append(o.got, out)
	o.mu.Unlock()
	o.ch <- struct{}{}
}

func (o *outcomes) wait(t *testing.T) {
	t.Helper()
	select {
	case <-o.ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no outcome within 30s")
	}
}

func attr(sp sdktrace.ReadOnlySpan, k string) (string, bool) {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == k {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func eventNames(sp sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, e := range sp.Events() {
		out = append(out, e.Name)
	}
	return out
}

// TestAttemptSpans: each attempt is a span with the entity, key, event,
// version and attempt; the failed first attempt's span records the retry,
// the second's the park, and the replay's attempt the replay, each with
// its outcome; the handler's context carries its attempt's span.
func TestAttemptSpans(t *testing.T) {
	rec, tp := newRecorder(t)
	outs := newOutcomes()
	var mu sync.Mutex
	var inHandler []trace.SpanContext
	fail := true
	e, err := runtime.New(func(ctx context.Context, _ string, _ event) error {
		mu.Lock()
		defer mu.Unlock()
		inHandler = append(inHandler, trace.SpanContextFromContext(ctx))
		if fail {
			return errors.New("down")
		}
		return nil
	}, runtime.Config[string, event]{
		Name: "Account", Tracer: oteltrace.New(tp), OnOutcome: outs.report,
		Retry: runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if err := e.Submit(t.Context(), "a", event{"a", 7}); err != nil {
		t.Fatal(err)
	}
	outs.wait(t) // parked
	mu.Lock()
	fail = false
	mu.Unlock()
	if err := e.Replay(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	outs.wait(t) // handled
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3 (two failed attempts, the replay's)", len(spans))
	}
	want := []struct {
		attempt, outcome string
		events           []string
		failed           bool
	}{
		{"1", "retried", []string{"exception", oteltrace.EventRetry}, true},
		{"2", "parked", []string{"exception", oteltrace.EventPark}, true},
		{"1", "handled", []string{oteltrace.EventReplay}, false},
	}
	for i, sp := range spans {
		w := want[i]
		if sp.Name() != "process Account" || sp.SpanKind() != trace.SpanKindConsumer {
			t.Errorf("span %d: %q of kind %v, want process Account, a consumer's", i, sp.Name(), sp.SpanKind())
		}
		for k, v := range map[string]string{"ordergen.entity": "Account", "ordergen.key": "a", "ordergen.event": "Deposited",
			"ordergen.version": "7", "ordergen.attempt": w.attempt, "ordergen.outcome": w.outcome} {
			if got, _ := attr(sp, k); got != v {
				t.Errorf("span %d: %s = %q, want %q", i, k, got, v)
			}
		}
		if got := eventNames(sp); len(got) != len(w.events) || (len(got) > 0 && got[len(got)-1] != w.events[len(w.events)-1]) {
			t.Errorf("span %d: events %v, want %v", i, got, w.events)
		}
		if (sp.Status().Code == codes.Error) != w.failed {
			t.Errorf("span %d: status %v, failed %v", i, sp.Status(), w.failed)
		}
		if inHandler[i].SpanID() != sp.SpanContext().SpanID() {
			t.Errorf("span %d: the handler's context carries %s, want %s", i, inHandler[i].SpanID(), sp.SpanContext().SpanID())
		}
	}
	if _, ok := attr(spans[2], "ordergen.replayed"); !ok {
		t.Errorf("the replay's span has no ordergen.replayed")
	}
}

// TestDeadLetteredSpan: an event that failed for good under the
// dead-letter policy ends its span with the dead letter as its outcome.
func TestDeadLetteredSpan(t *testing.T) {
	rec, tp := newRecorder(t)
	outs := newOutcomes()
	e, err := runtime.New(func(context.Context, string, event) error { return runtime.Permanent(errors.New("bad")) },
		runtime.Config[string, event]{Name: "Account", Tracer: oteltrace.New(tp), OnOutcome: outs.report,
			OnExhausted: runtime.SendToDeadLetter,
			DeadLetter:  func(context.Context, runtime.DeadLetterEvent[string, event]) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if err := e.Submit(t.Context(), "a", event{"a", 1}); err != nil {
		t.Fatal(err)
	}
	outs.wait(t)
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	if got, _ := attr(spans[0], "ordergen.outcome"); got != runtime.DeadLettered.String() {
		t.Errorf("outcome %q, want %q", got, runtime.DeadLettered)
	}
	if ev := eventNames(spans[0]); ev[len(ev)-1] != oteltrace.EventFate {
		t.Errorf("events %v, want the last %s", ev, oteltrace.EventFate)
	}
}

// TestInjectAndLink: a context without a span injects nothing; one with a
// span injects its W3C trace context, which an attempt of the message it
// is linked to (by tag) continues until it is unlinked; what is not a
// trace context is not linked.
func TestInjectAndLink(t *testing.T) {
	rec, tp := newRecorder(t)
	tr := oteltrace.New(tp)
	if got := tr.Inject(context.Background()); !got.IsZero() {
		t.Fatalf("Inject without a span: %+v, want nothing", got)
	}
	ctx, span := tp.Tracer("t").Start(context.Background(), "send")
	span.End()
	w := tr.Inject(ctx)
	if p, _ := tr.W3C(ctx); w.Parent == "" || p != w.Parent {
		t.Fatalf("Inject %+v, W3C %q", w, p)
	}
	tr.Link(1, w)
	tr.Link(2, transport.Trace{Parent: "not a traceparent"})
	start := func(tag uint64) sdktrace.ReadOnlySpan {
		a := runtime.Attempt{Engine: "E", Key: "k", Tag: tag, Number: 1}
		c := tr.StartAttempt(context.Background(), a)
		tr.EndAttempt(c, a, nil)
		return trace.SpanFromContext(c).(sdktrace.ReadOnlySpan)
	}
	if got := start(1); got.Parent().SpanID() != span.SpanContext().SpanID() || len(got.Links()) != 1 {
		t.Errorf("linked attempt: parent %s, links %v; want the sender's span %s", got.Parent().SpanID(), got.Links(), span.SpanContext().SpanID())
	}
	if got := start(2); got.Parent().IsValid() || len(got.Links()) != 0 {
		t.Errorf("attempt of a bad trace context: parent %v, links %v; want none", got.Parent(), got.Links())
	}
	tr.Unlink(1)
	if got := start(1); got.Parent().IsValid() {
		t.Errorf("attempt after Unlink: parent %v, want none", got.Parent())
	}
	if n := len(rec.Ended()); n != 4 {
		t.Errorf("%d spans ended, want 4", n)
	}
}

// TestRetiredOfAnotherEventKeepsTheFailedSpan: while a failed attempt's
// span waits for its event's fate, the outcome of another event of its key
// (an inline run reports an event's outcome once its worker moved past
// it) does not end it. TestTracerStress found the failed attempt's span
// ended as handled.
func TestRetiredOfAnotherEventKeepsTheFailedSpan(t *testing.T) {
	rec, tp := newRecorder(t)
	tr := oteltrace.New(tp)
	a := runtime.Attempt{Engine: "E", Key: "k", Tag: 2, Number: 1}
	ctx := tr.StartAttempt(context.Background(), a)
	tr.EndAttempt(ctx, a, errors.New("down"))
	tr.Retired("E", "k", 1, runtime.Handled) // the key's event before
	tr.Retired("E", "k", 3, runtime.Parked)  // an event behind it, parked first
	a.Number = 2
	ctx = tr.StartAttempt(context.Background(), a)
	tr.EndAttempt(ctx, a, nil)
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	if o, _ := attr(spans[0], "ordergen.outcome"); o != "retried" {
		t.Errorf("the failed attempt's outcome %q, want retried", o)
	}
}

// TestSubscribersSharingATracer: the subscribers of a topic may share a
// Tracer; one's attempt of a key does not end another's failed attempt of
// the same key.
func TestSubscribersSharingATracer(t *testing.T) {
	rec, tp := newRecorder(t)
	tr := oteltrace.New(tp)
	a := runtime.Attempt{Engine: "A", Key: "k", Tag: 1, Number: 1}
	ctx := tr.StartAttempt(context.Background(), a)
	tr.EndAttempt(ctx, a, errors.New("down"))
	b := runtime.Attempt{Engine: "B", Key: "k", Tag: 1, Number: 1}
	ctx = tr.StartAttempt(context.Background(), b)
	tr.EndAttempt(ctx, b, nil)
	tr.Retired("B", "k", 1, runtime.Parked) // not A's fate
	if n := len(rec.Ended()); n != 1 {
		t.Fatalf("%d spans ended, want B's only: A's failed attempt waits for its fate", n)
	}
	a.Number = 2
	ctx = tr.StartAttempt(context.Background(), a)
	tr.EndAttempt(ctx, a, nil)
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	if o, _ := attr(spans[1], "ordergen.outcome"); o != "retried" || spans[1].Name() != "process A" {
		t.Errorf("%s's first attempt: outcome %q, want retried", spans[1].Name(), o)
	}
}
