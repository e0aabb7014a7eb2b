package runtime_test

import (
	"context"
	"math/rand/v2"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

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

// BenchmarkAttemptContext measures what an attempt's own context costs:
// the same uniform no-op dispatch without a timeout (the handler gets the
// engine's base context) and with one (an attemptCtx per attempt, 48 bytes
// cut from its worker's slab), side by side. With -cpu 1 (a figure that
// the other core's work does not blur) on the 2-core machine of
// docs/benchmarks.md: 50 ns/event without, 103 with, 86 with GOGC=off. So
// about a third of the difference is the garbage collector's work for
// those bytes; a CPU profile puts most of the rest in the attempt's two
// atomic operations (publishing the context for the watchdog and ending
// it).
func BenchmarkAttemptContext(b *testing.B) {
	keys := benchKeys(1<<20, false)
	b.Run("none", func(b *testing.B) { benchDispatch(b, keys, runtime.Config[string, int]{}) })
	b.Run("timeout", func(b *testing.B) {
		benchDispatch(b, keys, runtime.Config[string, int]{Timeout: 5 * time.Second})
	})
}

// BenchmarkPerKeyLimit measures what a per-key limit below the total
// costs: uniform dispatch with the default Backlog.Total and a per-key
// limit equal to it, the default one, and a small one, side by side, with a
// handler that does nothing and with one that works a few hundred
// nanoseconds, which keeps the backlog full. While a shard holds at least
// PerKey events of keys without a lane, admission has to know the
// submitted key's share of them (shard.unlanedRoom).
func BenchmarkPerKeyLimit(b *testing.B) {
	keys := benchKeys(1<<20, false)
	var sink atomic.Uint64
	work := func(_ context.Context, _ string, n int) error {
		x := uint64(n)
		for range 200 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
		return nil
	}
	for _, h := range []struct {
		name string
		fn   runtime.Handler[string, int]
	}{{"noop", noop}, {"work", work}} {
		for _, perKey := range []int{runtime.DefaultTotal, runtime.DefaultPerKey, 16} {
			b.Run(h.name+"/per-key="+strconv.Itoa(perKey), func(b *testing.B) {
				benchHandle(b, keys, h.fn, runtime.Config[string, int]{
					Backlog: runtime.Backlog{PerKey: perKey, Total: runtime.DefaultTotal, WhenFull: runtime.Block},
				})
			})
		}
	}
}

// noop is the benchmarks' handler that does nothing.
func noop(context.Context, string, int) error { return nil }

// benchDispatch submits b.N events over keys through an engine with cfg
// (plus the benchmark's worker count, and its backlog unless cfg sets one)
// and a handler that does nothing, and waits for them.
func benchDispatch(b *testing.B, keys []string, cfg runtime.Config[string, int]) {
	benchHandle(b, keys, noop, cfg)
}

// benchHandle is benchDispatch with the handler h.
func benchHandle(b *testing.B, keys []string, h runtime.Handler[string, int], cfg runtime.Config[string, int]) {
	cfg.MaxActive = 8
	if cfg.Backlog == (runtime.Backlog{}) {
		cfg.Backlog = runtime.Backlog{PerKey: 4096, Total: 4096, WhenFull: runtime.Block}
	}
	cfg.Logger = discardLogger()
	e, err := runtime.New(h, cfg)
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
