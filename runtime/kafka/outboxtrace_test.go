package kafka_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/oteltrace"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// TestOutboxTraceReachesTheHandler follows one trace from a writer's
// transaction through the outbox, a relay that crashes after its send and
// before it marks the row, the relay that sends the row again, Kafka, and
// the consumer's engine: both copies are handled in spans of the writer's
// trace, children of the writer's span and linked to it, which the
// handler's context carries. On SQLite, and on PostgreSQL when
// ORDERGEN_TEST_POSTGRES is set.
func TestOutboxTraceReachesTheHandler(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		outboxTrace(t, func(ctx context.Context) (*sqlstore.Store, error) {
			return sqlite.Open(ctx, filepath.Join(t.TempDir(), "store.db"))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("ORDERGEN_TEST_POSTGRES")
		if dsn == "" {
			t.Skip("PostgreSQL tests skipped: set ORDERGEN_TEST_POSTGRES to a database DSN to run them")
		}
		outboxTrace(t, func(ctx context.Context) (*sqlstore.Store, error) { return postgres.Open(ctx, dsn) })
	})
}

func outboxTrace(t *testing.T, open func(context.Context) (*sqlstore.Store, error)) {
	ctx := t.Context()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	store, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	store.Trace(oteltrace.New(tp).W3C)
	var b [6]byte
	_, _ = rand.Read(b[:])
	entity := "Trace" + hex.EncodeToString(b[:])
	st := newConformanceStream(t, transporttest.StreamSpec{Name: "ogtrace-" + hex.EncodeToString(b[:]), Units: 1})
	producer := st.Producer(t, transporttest.ProducerOptions{})

	// The writer's transaction, in the writer's span.
	wctx, write := tp.Tracer("writer").Start(ctx, "write")
	tx, err := store.DB().BeginTx(wctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendOutbox(wctx, tx, entity, "k", func(v uint64) (durable.RawEvent, error) {
		name, data, err := transporttest.Codec{}.Encode(transporttest.Event{Key: "k", Seq: int(v)})
		return durable.RawEvent{Name: name, Data: data}, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	write.End()
	w := write.SpanContext()

	// The first relay sends the row and crashes before it marks it.
	sent := make(chan struct{})
	var once sync.Once
	crashing := sinkFunc(func(ctx context.Context, key string, e transporttest.Event) error {
		if err := producer.Send(ctx, key, e); err != nil {
			return err
		}
		once.Do(func() { close(sent) })
		<-ctx.Done() // the crash: the round never commits
		return ctx.Err()
	})
	runRelay := func(ctx context.Context, sink transport.Sink[string, transporttest.Event]) chan error {
		r, err := outbox.New(outbox.Config[string, transporttest.Event]{Store: store, Entity: entity, Codec: transporttest.Codec{}, Sink: sink, Poll: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		return done
	}
	rctx, crash := context.WithCancel(ctx)
	first := runRelay(rctx, crashing)
	<-sent
	crash()
	<-first
	sctx, stop := context.WithCancel(ctx)
	second := runRelay(sctx, producer)
	defer func() { stop(); <-second }()

	// The consumer handles both copies.
	c := st.Consumer(t, transporttest.ConsumerOptions{Name: "c"})
	var mu sync.Mutex
	var handled []trace.SpanContext
	got := make(chan struct{}, 2)
	eng, err := runtime.New(func(ctx context.Context, _ string, _ transporttest.Event) error {
		mu.Lock()
		handled = append(handled, trace.SpanContextFromContext(ctx))
		mu.Unlock()
		got <- struct{}{}
		return nil
	}, runtime.Config[string, transporttest.Event]{Name: "c", Tracer: oteltrace.New(tp), OnOutcome: c.OnOutcome})
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- c.Run(ctx, transport.EngineTarget(eng)) }()
	for range 2 {
		select {
		case <-got:
		case <-time.After(time.Minute):
			t.Fatal("the two copies of the row were not handled within a minute")
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}

	var spans []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.InstrumentationScope().Name == oteltrace.ScopeName {
			spans = append(spans, sp)
		}
	}
	if len(spans) != 2 {
		t.Fatalf("%d attempt spans, want 2 (the row sent twice)", len(spans))
	}
	for i, sp := range spans {
		sc := sp.SpanContext()
		if sc.TraceID() != w.TraceID() || sp.Parent().SpanID() != w.SpanID() {
			t.Errorf("copy %d: span in trace %s under %s, want the writer's %s under %s", i, sc.TraceID(), sp.Parent().SpanID(), w.TraceID(), w.SpanID())
		}
		if ls := sp.Links(); len(ls) != 1 || ls[0].SpanContext.SpanID() != w.SpanID() {
			t.Errorf("copy %d: links %v, want one to the writer's span", i, ls)
		}
		if handled[i].SpanID() != sc.SpanID() {
			t.Errorf("copy %d: the handler's context carries span %s, want %s", i, handled[i].SpanID(), sc.SpanID())
		}
	}
}

// sinkFunc is a transport.Sink from a function.
type sinkFunc func(ctx context.Context, key string, e transporttest.Event) error

func (f sinkFunc) Send(ctx context.Context, key string, e transporttest.Event) error {
	return f(ctx, key, e)
}
