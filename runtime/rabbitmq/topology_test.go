package rabbitmq_test

import (
	"fmt"
	"testing"

	"github.com/ordergen/ordergen/runtime/rabbitmq"
)

// Jump consistent hash: every bucket in range, keys spread evenly, and
// growing the buckets from n to n+1 moves keys only into the new one.
func TestQueueOfSpreadsAndMovesLittle(t *testing.T) {
	const keys = 20000
	for _, n := range []int{1, 2, 3, 8, 16} {
		small := rabbitmq.Topology{Name: "t", Queues: n}
		big := rabbitmq.Topology{Name: "t", Queues: n + 1}
		count := make([]int, n)
		moved := 0
		for i := range keys {
			k := fmt.Sprintf("key-%d", i)
			q := small.QueueOf(k)
			if q < 0 || q >= n {
				t.Fatalf("QueueOf(%q) = %d with %d queues", k, q, n)
			}
			count[q]++
			if q2 := big.QueueOf(k); q2 != q {
				if q2 != n {
					t.Fatalf("growing %d -> %d moved %q from %d to %d, not to the new queue", n, n+1, k, q, q2)
				}
				moved++
			}
		}
		for q, c := range count {
			if c < keys/n*8/10 || c > keys/n*12/10 {
				t.Errorf("%d queues: queue %d has %d of %d keys", n, q, c, keys)
			}
		}
		if want := keys / (n + 1); moved < want*8/10 || moved > want*12/10 {
			t.Errorf("growing %d -> %d moved %d keys, want about %d", n, n+1, moved, want)
		}
	}
	// Other publishers must compute the same: values from an independent
	// implementation (Python: FNV-1a 64, then the paper's jump hash).
	for _, c := range []struct {
		key     string
		n, want int
	}{{"alice", 4, 3}, {"alice", 16, 4}, {"bob", 4, 2}, {"bob", 16, 12}, {"order-42", 4, 0}, {"order-42", 16, 7}, {"", 4, 1}, {"", 16, 13}} {
		if got := (rabbitmq.Topology{Queues: c.n}).QueueOf(c.key); got != c.want {
			t.Errorf("QueueOf(%q) over %d queues = %d, want %d", c.key, c.n, got, c.want)
		}
	}
	if got := rabbitmq.Jump(0, 1); got != 0 {
		t.Errorf("jump(0, 1) = %d", got)
	}
}

func TestTopologyNames(t *testing.T) {
	topo := rabbitmq.Topology{Name: "orders", Queues: 3}
	if got := topo.Queue(2); got != "orders.2" {
		t.Errorf("Queue(2) = %q", got)
	}
	if got := topo.DeadLetterExchange(); got != "orders.dlx" {
		t.Errorf("DeadLetterExchange = %q", got)
	}
	if got := topo.DeadLetterQueue(); got != "orders.dlq" {
		t.Errorf("DeadLetterQueue = %q", got)
	}
}
