package benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
	"github.com/ordergen/ordergen/benchmarks/workload"
)

// TestSuiteRuns runs every peer on every workload of the suite with a few
// thousand events and the suite's own checks: every event handled exactly
// once, and in per-key order by the ordered peers.
func TestSuiteRuns(t *testing.T) {
	keys := workload.Keys()
	for _, wl := range workload.Dispatch() {
		seq := wl.Sequence()
		spin := workload.Calibrate(wl.Work)
		for _, peer := range peers.All() {
			t.Run(wl.Name+"/"+peer.Name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				run := workload.NewRun(keys, seq, 3000, workload.Options{Submitters: wl.Submitters, Spin: spin, Ordered: peer.Ordered, Track: true})
				p, err := peer.New(run.Handler(), Workers)
				if err != nil {
					t.Fatal(err)
				}
				if err := run.Drive(ctx, p); err != nil {
					t.Fatal(err)
				}
				if err := p.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := run.Verify(); err != nil {
					t.Fatal(err)
				}
				if wl.Skewed && run.LastCold() <= 0 {
					t.Error("no completion time recorded for the cold keys")
				}
			})
		}
	}
}
