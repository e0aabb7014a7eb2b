package rabbitmq_test

import (
	"os"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// stressDuration is how long the stress tests inject faults: 3s, or
// ORDERGEN_STRESS_DURATION (a Go duration) for a long run.
func stressDuration(t *testing.T) time.Duration {
	if s := os.Getenv("ORDERGEN_STRESS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("ORDERGEN_STRESS_DURATION: %v", err)
		}
		return d
	}
	return 3 * time.Second
}

// TestStress kills, closes, parks and replays at random against the real
// server (see transporttest.Stress), and checks that nothing is lost or
// applied out of order and that two handlers of a key never overlap.
func TestStress(t *testing.T) {
	url := brokerURL(t)
	transporttest.Stress(t, harness(url, rabbitmq.ConsistentHash), transporttest.StressOptions{Duration: stressDuration(t)})
}

// TestStressDisconnect also cuts consumers' TCP connections at random: the
// consumer reconnects by itself, and the broker delivers what it held
// again.
func TestStressDisconnect(t *testing.T) {
	url := brokerURL(t)
	transporttest.Stress(t, harness(url, rabbitmq.PublisherHash), transporttest.StressOptions{Duration: stressDuration(t), Disconnect: true})
}

// TestStressNetFaults cuts and stalls consumers' networks at random (each
// behind a netfault.Net of its own), and closes and kills consumers cut
// off: they reconnect by themselves or stop in time, and nothing is lost or
// reordered (overlaps are counted: RabbitMQ has no lease).
func TestStressNetFaults(t *testing.T) {
	url := brokerURL(t)
	transporttest.Stress(t, harness(url, rabbitmq.ConsistentHash), transporttest.StressOptions{Duration: stressDuration(t), NetFaults: true})
}
