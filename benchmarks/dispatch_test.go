package benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
	"github.com/ordergen/ordergen/benchmarks/workload"
)

// BenchmarkDispatch runs every peer on every workload: one op is one event,
// submitted from one goroutine (or, in the -4sub workload, from 4, each
// with its own keys); the timing includes waiting until every event is
// handled.
func BenchmarkDispatch(b *testing.B) {
	keys := workload.Keys()
	for _, wl := range workload.Dispatch() {
		b.Run(wl.Name, func(b *testing.B) {
			// A parent benchmark runs once: the setup is shared by the
			// peers, and skipped when -bench filters the workload out.
			seq := wl.Sequence()
			spin := workload.Calibrate(wl.Work)
			for _, peer := range peers.All() {
				b.Run(peer.Name, func(b *testing.B) {
					benchDispatch(b, peer, keys, seq, workload.Options{Submitters: wl.Submitters, Spin: spin, Ordered: peer.Ordered})
				})
			}
		})
	}
}

// benchDispatch times b.N events of one workload through one peer.
func benchDispatch(b *testing.B, peer peers.Spec, keys []string, seq []uint32, o workload.Options) {
	run := workload.NewRun(keys, seq, b.N, o)
	p, err := peer.New(run.Handler(), Workers)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := driveTimed(b, run, p)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// driveTimed submits run's events to p while the timer runs, and stops the
// timer once they are all handled: closing p and verifying the run are not
// timed. It returns the CPU time the process spent meanwhile (every
// goroutine's: the submitters' and the peer's), which a shared machine
// disturbs less than the wall time.
func driveTimed(b *testing.B, run *workload.Run, p peers.Peer) time.Duration {
	b.Helper()
	ctx := context.Background()
	cpu := cpuTime()
	if err := run.Drive(ctx, p); err != nil {
		b.Fatal(err)
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	if err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if err := run.Verify(); err != nil {
		b.Fatal(err)
	}
	return cpu
}
