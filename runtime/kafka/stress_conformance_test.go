package kafka_test

import (
	"flag"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transporttest"
)

// TestConformanceStress kills, closes, parks and replays at random on
// kfake (see transporttest.Stress).
func TestConformanceStress(t *testing.T) {
	transporttest.Stress(t, transporttest.Harness{
		NewStream:   newConformanceStream,
		Limits:      transporttest.Limits{NoLeases: true},
		ParkBlocked: kafkaParkBlocked,
	}, transporttest.StressOptions{})
}

var netFaultsFor = flag.Duration("kafka.netfaults", 3*time.Second, "how long TestConformanceStressNetFaults injects faults (run long with e.g. -kafka.netfaults=5m)")

// TestConformanceStressNetFaults also cuts and stalls the consumers'
// networks at random, and closes and kills consumers cut off: nothing is
// lost or reordered, and every stop returns (overlaps are counted: a member
// cut off keeps its partitions until its session times out).
func TestConformanceStressNetFaults(t *testing.T) {
	transporttest.Stress(t, transporttest.Harness{
		NewStream:   newConformanceStream,
		Limits:      transporttest.Limits{NoLeases: true},
		ParkBlocked: kafkaParkBlocked,
	}, transporttest.StressOptions{Duration: *netFaultsFor, NetFaults: true})
}
