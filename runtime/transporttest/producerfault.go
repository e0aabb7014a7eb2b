package transporttest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// producerCut: the connections of a producer are killed while it
// publishes, and refused for a while. Its sends fail or wait; a send that
// failed pauses its key (transport.AsyncSink's rule), so that no later
// event of the key lands after a gap. The publisher, as a single writer or
// an outbox relay would, sends again once the network is back, from each
// key's first failed event, in order: through the same producer
// (Resume), or through a new one when it cannot recover its connection.
// Nothing is lost and every key's events are applied in order (a send
// whose answer was lost may arrive twice: the guard skips it).
func (s *suite) producerCut(t *testing.T) {
	s.skipNetwork(t)
	st := s.stream(t, 2)
	b := newBook()
	c := s.start(t, st, b, memberSpec{name: "c"})
	n := s.net(t)
	ks := keys("p", s.n(8, 2))
	perKey := s.n(40, 12)
	q := perKey / 4
	p := s.publisherOf(t, st, ProducerOptions{Net: n})

	// The first quarter on a healthy network.
	p.publish(t, ks, 1, q)

	// The second quarter while the connections are killed (at the first
	// answer), the rest once they are refused.
	r := newSendLog(ks)
	answered := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	sendRange := func(from, to int) {
		var wg sync.WaitGroup
		for _, k := range ks {
			wg.Go(func() {
				for seq := from; seq <= to; seq++ {
					transport.SendKeyed[string, Event](ctx, p.sink, Event{k, seq}, nil, func(err error) {
						r.answer(k, seq, err)
						once.Do(func() { close(answered) })
					})
				}
			})
		}
		wg.Wait()
	}
	second := make(chan struct{})
	go func() {
		defer close(second)
		sendRange(q+1, 2*q)
	}()
	s.await(t, answered, "an answer to a send")
	n.Cut()
	<-second
	go sendRange(2*q+1, perKey)
	// The outage lasts until a send fails, or for outage when the
	// producer's sends wait instead (a client that retries until the
	// broker is back); by then it must have tried to connect again.
	octx, ocancel := context.WithTimeout(ctx, outage)
	_ = n.Await(octx, func(netfault.Stats) bool { return r.failures() > 0 })
	ocancel()
	if err := n.Await(ctx, func(st netfault.Stats) bool { return st.Refused > 0 || r.failures() > 0 }); err != nil {
		t.Fatalf("the producer never noticed the cut: %v", err)
	}
	n.Resume()
	if a, ok := p.sink.(transport.AsyncSink[string, Event]); ok {
		if err := a.Flush(ctx); err != nil {
			t.Fatalf("flush after the network came back: %v", err)
		}
	}
	if err := r.await(ctx, len(ks)*(perKey-q)); err != nil {
		t.Fatalf("the sends after the cut were not all answered: %v", err)
	}

	// Send again, from each key's first failure, in order.
	var fresh *publisher
	resent := 0
	for _, k := range ks {
		from := r.firstFailed(k)
		if from == 0 {
			continue
		}
		if a, ok := p.sink.(transport.AsyncSink[string, Event]); ok {
			a.Resume(k)
		}
		for seq := from; seq <= perKey; seq++ {
			e := Event{k, seq}
			err := p.sink.Send(ctx, k, e)
			if err != nil {
				// The producer cannot recover its connection: a new one.
				if fresh == nil {
					fresh = s.publisherOf(t, st, ProducerOptions{Net: n})
				}
				err = fresh.sink.Send(ctx, k, e)
			}
			if err != nil {
				t.Fatalf("send %+v again after the network came back: %v", e, err)
			}
			resent++
		}
	}
	b.wait(t, len(ks)*perKey, s.timeout, "every event")
	c.close(t, s.timeout)
	res := b.check(t, len(ks)*perKey, -1)
	ns := n.Stats()
	t.Logf("%d sends failed (%v), %d sent again%s; %d connections killed, %d refused; %d delivered twice",
		r.failures(), r.firstError(), resent, map[bool]string{true: " (some through a new producer)"}[fresh != nil], ns.Killed, ns.Refused, res.dups)
}

// outage is how long the producer's network stays cut when its sends do
// not fail: the scenario, not a synchronisation.
const outage = 5 * time.Second

// sendLog keeps the answers to the sends of each key.
type sendLog struct {
	mu      sync.Mutex
	answers map[string]map[int]error
	n, fail int
	first   error
	changed chan struct{}
}

func newSendLog(ks []string) *sendLog {
	r := &sendLog{answers: map[string]map[int]error{}, changed: make(chan struct{})}
	for _, k := range ks {
		r.answers[k] = map[int]error{}
	}
	return r
}

func (r *sendLog) answer(key string, seq int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.answers[key][seq]; dup {
		return
	}
	r.answers[key][seq] = err
	r.n++
	if err != nil {
		r.fail++
		if r.first == nil {
			r.first = err
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *sendLog) failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail
}

func (r *sendLog) firstError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// firstFailed returns the first Seq of key whose send failed, or 0.
func (r *sendLog) firstFailed(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	least := 0
	for seq, err := range r.answers[key] {
		if err != nil && (least == 0 || seq < least) {
			least = seq
		}
	}
	return least
}

// await waits until n sends were answered.
func (r *sendLog) await(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		got, ch := r.n, r.changed
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d answered: %w", got, n, ctx.Err())
		}
	}
}
