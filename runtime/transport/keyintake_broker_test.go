package transport_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// ev is the test entity's one event: the Seq-th event of Key, from 1.
type ev struct {
	Key string
	Seq int
}

func (e ev) EventKey() string { return e.Key }

// handle is the fake broker's handle of one delivery.
type handle struct {
	key   string
	index int // in the key's log
	gen   int // the key's generation when delivered: a nack starts a new one
}

// broker is a fake key-ordered broker with Pub/Sub's semantics: a key's
// messages are delivered in order, several of a key may be outstanding at
// once, and a nack (or a lapsed lease) makes the broker deliver the
// message again with every later message of its key, acknowledged ones
// included. Deliveries travel through a channel, so some arrive after a
// nack that made them stale, as on a stream.
type broker struct {
	mu       sync.Mutex
	logs     map[string][]ev // per key, every message published
	acked    map[string][]bool
	next     map[string]int // per key, the next index to deliver
	gen      map[string]int
	from     map[string]int // per key, the index whose nack (or lapse) began the generation
	inFlight map[string]int // per key, outstanding deliveries
	maxOut   int            // per key, outstanding deliveries at most (1: SQS FIFO, pstest)
	wire     chan transport.Message[ev, handle]
	nacks    int
	acks     int
}

func newBroker(maxOut int) *broker {
	return &broker{logs: map[string][]ev{}, acked: map[string][]bool{}, next: map[string]int{}, gen: map[string]int{},
		from: map[string]int{}, inFlight: map[string]int{}, maxOut: maxOut, wire: make(chan transport.Message[ev, handle], 64)}
}

func (b *broker) publish(e ev) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logs[e.Key] = append(b.logs[e.Key], e)
	b.acked[e.Key] = append(b.acked[e.Key], false)
}

// deliverSome puts the next deliverable message of up to n keys on the
// wire; it reports whether it found any. lease is each delivery's lease.
func (b *broker) deliverSome(n int, lease time.Duration, pick func(int) int) bool {
	b.mu.Lock()
	var out []transport.Message[ev, handle]
	keys := make([]string, 0, len(b.logs))
	for k := range b.logs {
		keys = append(keys, k)
	}
	for range n {
		if len(keys) == 0 {
			break
		}
		i := pick(len(keys))
		k := keys[i]
		keys = append(keys[:i], keys[i+1:]...)
		idx := b.next[k]
		for idx < len(b.logs[k]) && b.acked[k][idx] && b.inFlight[k] == 0 {
			idx++ // acknowledged and nothing before it outstanding: gone for good
		}
		b.next[k] = idx
		if idx >= len(b.logs[k]) || b.inFlight[k] >= b.maxOut {
			continue
		}
		b.next[k] = idx + 1
		b.inFlight[k]++
		e := b.logs[k][idx]
		out = append(out, transport.Message[ev, handle]{Key: k, ID: fmt.Sprintf("%s/%d", k, idx), Handle: handle{k, idx, b.gen[k]},
			Lease: time.Now().Add(lease), Event: e})
	}
	b.mu.Unlock()
	for _, m := range out {
		b.wire <- m
	}
	return len(out) > 0
}

// settle is the consumer's Settle: an ack, or a nack that sends the key
// back to the message.
func (b *broker) settle(h handle, st transport.Settlement) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.gen != b.gen[h.key] {
		if h.index >= b.from[h.key] {
			return // delivered again since: the broker ignores this delivery's settlement
		}
		// A delivery before the message whose nack began this generation
		// is still outstanding, as on Pub/Sub, where the nack of a later
		// message leaves an earlier one's delivery alone: its ack counts,
		// and its nack sends the key back to it. (Ignoring it lost the
		// message: the broker never delivered it again.)
		if st == transport.Finished {
			b.acked[h.key][h.index] = true
			b.acks++
			return
		}
	} else {
		b.inFlight[h.key]--
		if st == transport.Finished {
			b.acked[h.key][h.index] = true
			b.acks++
			return
		}
	}
	b.nacks++
	// Every later message of the key comes again, acknowledged or not.
	b.gen[h.key]++
	b.from[h.key] = h.index
	b.inFlight[h.key] = 0
	b.next[h.key] = h.index
	for i := h.index; i < len(b.acked[h.key]); i++ {
		b.acked[h.key][i] = false
	}
}

// expire gives back every outstanding delivery of the keys whose
// deliveries the consumer dropped (a crash): their leases lapsed.
func (b *broker) expireAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.logs {
		if b.inFlight[k] == 0 {
			continue
		}
		b.gen[k]++
		b.inFlight[k] = 0
		first := len(b.acked[k])
		for i, a := range b.acked[k] {
			if !a {
				first = i
				break
			}
		}
		b.next[k] = first
		b.from[k] = first
	}
}

// drained reports whether every message was acknowledged.
func (b *broker) drained() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, as := range b.acked {
		for _, a := range as {
			if !a {
				return false
			}
		}
		_ = k
	}
	return true
}

// TestBrokerRedeliversAnEarlierMessageNackedAfterALaterOne is the fake
// broker's regression test: an ending ownership gives back the key's
// unstarted message (61) at once and its running one (60) once the handler
// returns, so the later message's nack reaches the broker first. The fake
// used to ignore the earlier delivery's nack as one of an earlier
// generation, and never delivered 60 again: the stress test then saw 61
// handled after 59 once the fence's window lapsed.
func TestBrokerRedeliversAnEarlierMessageNackedAfterALaterOne(t *testing.T) {
	b := newBroker(4)
	b.publish(ev{"k", 1})
	b.publish(ev{"k", 2})
	first := func(int) int { return 0 }
	b.deliverSome(1, time.Minute, first)
	b.deliverSome(1, time.Minute, first)
	m1, m2 := <-b.wire, <-b.wire
	b.settle(m2.Handle, transport.Unfinished)
	b.settle(m1.Handle, transport.Unfinished)
	b.deliverSome(1, time.Minute, first)
	if again := <-b.wire; again.Event.Seq != 1 {
		t.Fatalf("after both nacks the broker delivered %d first, want 1", again.Event.Seq)
	}
}
