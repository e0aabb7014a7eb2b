package benchmarks

import (
	"testing"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
	"github.com/ordergen/ordergen/benchmarks/workload"
)

// hotKeySpec returns the workload of the hot-key scenario.
func hotKeySpec() workload.Spec {
	return workload.Spec{Name: "hotkey", Skewed: true, Work: time.Microsecond}
}

// BenchmarkHotKey runs the hot-key scenario on every peer: one op is
// HotKeyEvents events, half of them on one key, each taking about 1 µs of
// CPU. It reports ns/last-cold, the completion time of the last event of a
// cold key counted from the first submit: how long the hot key held the
// others back.
func BenchmarkHotKey(b *testing.B) {
	keys := workload.Keys()
	spec := hotKeySpec()
	seq := spec.Sequence()
	spin := workload.Calibrate(spec.Work)
	for _, peer := range peers.All() {
		b.Run(peer.Name, func(b *testing.B) {
			var lastCold time.Duration
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				run := workload.NewRun(keys, seq, HotKeyEvents, workload.Options{Spin: spin, Ordered: peer.Ordered, Track: true})
				p, err := peer.New(run.Handler(), Workers)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				driveTimed(b, run, p)
				lastCold += run.LastCold()
				b.StartTimer()
			}
			b.ReportMetric(float64(lastCold.Nanoseconds())/float64(b.N), "ns/last-cold")
		})
	}
}
