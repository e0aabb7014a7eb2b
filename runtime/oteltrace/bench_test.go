package oteltrace_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/oteltrace"
)

// BenchmarkTracing measures handled events (a no-op handler over 10,000
// keys; ns/op is ns per event) with tracing off (no Config.Tracer), on
// with a sampler that drops every span, and on recording every span (into
// a processor that counts them). Compare the three within one run, on a
// quiet machine:
//
//	go test -run '^$' -bench Tracing -benchtime 300000x -count 5 ./runtime/oteltrace
func BenchmarkTracing(b *testing.B) {
	var ended atomic.Int64
	for _, c := range []struct {
		name string
		tp   func() *sdktrace.TracerProvider
	}{
		{"off", nil},
		{"dropped", func() *sdktrace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		}},
		{"recorded", func() *sdktrace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
				sdktrace.WithSpanProcessor(counter{&ended}))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var tracer runtime.Tracer
			if c.tp != nil {
				tp := c.tp()
				defer tp.Shutdown(context.Background())
				tracer = oteltrace.New(tp)
			}
			benchHandled(b, tracer)
		})
	}
	if ended.Load() == 0 {
		b.Fatal("the recording provider recorded no span")
	}
}

func benchHandled(b *testing.B, tracer runtime.Tracer) {
	e, err := runtime.New(func(context.Context, string, int) error { return nil }, runtime.Config[string, int]{
		MaxActive: 8,
		Backlog:   runtime.Backlog{PerKey: 4096, Total: 4096, WhenFull: runtime.Block},
		Tracer:    tracer,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	for i := range 50000 { // warm up: lanes, buffers and maps reach their size
		_ = e.Submit(ctx, keys[i%len(keys)], i)
	}
	_ = e.Flush(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := e.Submit(ctx, keys[i%len(keys)], i); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := e.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// counter is a span processor that counts the spans that end.
type counter struct{ n *atomic.Int64 }

func (counter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c counter) OnEnd(sdktrace.ReadOnlySpan)                   { c.n.Add(1) }
func (counter) Shutdown(context.Context) error                  { return nil }
func (counter) ForceFlush(context.Context) error                { return nil }
