package kafka_test

import (
	"testing"

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
