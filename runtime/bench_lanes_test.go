package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// BenchmarkLaneEngines measures the engines whose keys always run in lanes
// (a conflating engine and a batch handler) on the same no-op workloads as
// BenchmarkEngine: one op is one event, submitted from one goroutine over
// 10,000 keys, uniform or skewed (one key half of the events), and waited
// for. They are where the scheduler's lanes, rather than inline dispatch,
// carry the load.
func BenchmarkLaneEngines(b *testing.B) {
	for _, kind := range []string{"conflate", "batch"} {
		for _, skewed := range []bool{false, true} {
			name := kind + "/uniform"
			if skewed {
				name = kind + "/skewed"
			}
			b.Run(name, func(b *testing.B) { benchLaneEngine(b, kind, benchKeys(1<<20, skewed)) })
		}
	}
}

func benchLaneEngine(b *testing.B, kind string, keys []string) {
	cfg := runtime.Config[string, int]{
		MaxActive: 8,
		Backlog:   runtime.Backlog{PerKey: 4096, Total: 4096, WhenFull: runtime.Block},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	var e *runtime.Engine[string, int]
	var err error
	if kind == "conflate" {
		cfg.Conflate = true
		e, err = runtime.New(func(context.Context, string, int) error { return nil }, cfg)
	} else {
		e, err = runtime.NewBatch(func(context.Context, string, []int) error { return nil }, cfg)
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 100000; i++ { // warm up
		_ = e.Submit(ctx, keys[i&(len(keys)-1)], i)
	}
	_ = e.Flush(ctx)
	b.ReportAllocs()
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
	if err := e.Close(ctx); err != nil {
		b.Fatal(err)
	}
}
