package otelmetrics_test

import (
	"context"
	"strconv"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/otelmetrics"
)

// BenchmarkEngineOnOpenTelemetry measures no-op dispatch over 10,000 keys
// with the OpenTelemetry SDK behind the adapter (its reader never
// collecting, so only recording costs). allocs/event must stay 0: compare
// with runtime's BenchmarkMetrics.
//
//	go test -run '^$' -bench OnOpenTelemetry -benchtime 1000000x ./runtime/otelmetrics
func BenchmarkEngineOnOpenTelemetry(b *testing.B) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sdk.Shutdown(context.Background())
	e, err := runtime.New(func(context.Context, string, int) error { return nil }, runtime.Config[string, int]{
		MaxActive:     8,
		Backlog:       runtime.Backlog{PerKey: 4096, Total: 4096, WhenFull: runtime.Block},
		MeterProvider: otelmetrics.NewMeterProvider(sdk),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	for i := range 100000 { // warm up: lanes, buffers and maps reach their size
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
