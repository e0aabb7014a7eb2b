package runtime_test

import (
	"context"
	"math/rand/v2"
	goruntime "runtime"
	"strconv"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

// benchKeys returns n keys drawn from 10,000: uniformly, or with one key
// taking half of them (skewed).
func benchKeys(n int, skewed bool) []string {
	names := make([]string, 10000)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	for i := range keys {
		if skewed && rng.IntN(2) == 0 {
			keys[i] = names[0]
		} else {
			keys[i] = names[rng.IntN(len(names))]
		}
	}
	return keys
}

// BenchmarkEngine measures dispatch through the engine with a no-op
// handler: one op is one event, submitted from one goroutine over 10,000
// keys and waited for. Run with -benchtime=1000000x for the 1M-event run.
func BenchmarkEngine(b *testing.B) {
	for _, wl := range []struct {
		name   string
		skewed bool
	}{{"uniform", false}, {"skewed", true}} {
		b.Run(wl.name, func(b *testing.B) {
			benchDispatch(b, benchKeys(1<<20, wl.skewed), runtime.Config[string, int]{})
		})
	}
}

// BenchmarkMetrics measures the same uniform no-op dispatch without a meter
// provider and with metricstest's in-memory one (never collected, so only
// recording costs): compare the two in one run. What OpenTelemetry adds
// is measured in runtime/otelmetrics.
func BenchmarkMetrics(b *testing.B) {
	keys := benchKeys(1<<20, false)
	b.Run("none", func(b *testing.B) { benchDispatch(b, keys, runtime.Config[string, int]{}) })
	b.Run("provider", func(b *testing.B) {
		benchDispatch(b, keys, runtime.Config[string, int]{MeterProvider: metricstest.New()})
	})
}

// BenchmarkPerKeyLimit measures what a per-key limit below the total
// costs: the uniform no-op dispatch with the default Backlog.Total and a
// per-key limit equal to it, the default one, and a small one, side by
// side. While a shard holds at least PerKey events of keys without a lane,
// admission counts the submitted key's events among them
// (shard.unlanedCount), a scan of the shard's inbox and inline batch.
func BenchmarkPerKeyLimit(b *testing.B) {
	keys := benchKeys(1<<20, false)
	for _, perKey := range []int{runtime.DefaultTotal, runtime.DefaultPerKey, 16} {
		b.Run("per-key="+strconv.Itoa(perKey), func(b *testing.B) {
			benchDispatch(b, keys, runtime.Config[string, int]{
				Backlog: runtime.Backlog{PerKey: perKey, Total: runtime.DefaultTotal, WhenFull: runtime.Block},
			})
		})
	}
}

// benchDispatch submits b.N events over keys through an engine with cfg
// (plus the benchmark's worker count, and its backlog unless cfg sets one)
// and waits for them.
func benchDispatch(b *testing.B, keys []string, cfg runtime.Config[string, int]) {
	noop := func(context.Context, string, int) error { return nil }
	cfg.MaxActive = 8
	if cfg.Backlog == (runtime.Backlog{}) {
		cfg.Backlog = runtime.Backlog{PerKey: 4096, Total: 4096, WhenFull: runtime.Block}
	}
	cfg.Logger = discardLogger()
	e, err := runtime.New(noop, cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// Warm up: lanes, buffers and the map reach their steady size.
	for i := 0; i < 100000; i++ {
		_ = e.Submit(ctx, keys[i&(len(keys)-1)], i)
	}
	_ = e.Flush(ctx)
	b.ReportAllocs()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Submit(ctx, keys[i&(len(keys)-1)], i); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	cpu = cpuTime() - cpu
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/event")
	if err := e.Close(ctx); err != nil {
		b.Fatal(err)
	}
}
