package transport_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

var connWriterStress = flag.Duration("connwriter.stress", time.Second, "how long TestConnWriterStress attacks a ConnWriter (run long with e.g. -connwriter.stress=5m)")

// fakeBroker is a broker whose connections take sends in order and answer
// them, or die, when step says; it logs what it stored, by key.
type fakeBroker struct {
	rng *rand.Rand // used under mu
	// mu guards what follows.
	mu      sync.Mutex
	conns   []*fakeConn
	tokens  map[int]sent // token: what it carries
	stored  map[string][]int
	dialErr bool // the next dial fails
	w       *transport.ConnWriter[string, int, *fakeConn, int]
	next    atomic.Int64
}

type sent struct {
	key string
	seq int
}

type fakeConn struct {
	queue []int // sent, not answered
	dead  bool
	lost  func(error)
}

func newFakeBroker(t *testing.T, seed uint64) *fakeBroker {
	b := &fakeBroker{rng: rand.New(rand.NewPCG(seed, 1)), tokens: map[int]sent{}, stored: map[string][]int{}}
	w, err := transport.NewConnWriter(transport.ConnConfig[string, int, *fakeConn, int]{
		System: "fake",
		Dial: func(_ context.Context, lost func(error)) (*fakeConn, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.dialErr {
				b.dialErr = false
				return nil, errors.New("refused")
			}
			c := &fakeConn{lost: lost}
			b.conns = append(b.conns, c)
			return c, nil
		},
		Encode: func(_ context.Context, key string, seq int) (int, error) {
			tok := int(b.next.Add(1))
			b.mu.Lock()
			b.tokens[tok] = sent{key, seq}
			b.mu.Unlock()
			return tok, nil
		},
		Send: func(c *fakeConn, tok int) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			if c.dead {
				return errors.New("connection closed")
			}
			c.queue = append(c.queue, tok)
			return nil
		},
		Close: func(c *fakeConn) { b.kill(c, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	b.w = w
	return b
}

// kill ends c: it stores a part of what it was sent, unanswered, and tells
// the writer (storing then answering would be a fault of the writer's).
func (b *fakeBroker) kill(c *fakeConn, stored []int) {
	b.mu.Lock()
	if c.dead {
		b.mu.Unlock()
		return
	}
	c.dead = true
	for _, tok := range stored {
		s := b.tokens[tok]
		b.stored[s.key] = append(b.stored[s.key], s.seq)
	}
	c.queue = nil
	b.mu.Unlock()
	c.lost(errors.New("killed"))
}

// step answers the oldest send of a live connection, or kills it, or lets
// the next dial fail. It reports whether there was anything to do.
func (b *fakeBroker) step() bool {
	b.mu.Lock()
	var c *fakeConn
	for _, cc := range b.conns {
		if !cc.dead && len(cc.queue) > 0 {
			c = cc
			break
		}
	}
	if c == nil {
		b.mu.Unlock()
		return false
	}
	switch r := b.rng.IntN(100); {
	case r < 4: // dies, having stored a prefix of what it was sent
		stored := append([]int(nil), c.queue[:b.rng.IntN(len(c.queue)+1)]...)
		b.mu.Unlock()
		b.kill(c, stored)
	case r < 6:
		b.dialErr = true
		b.mu.Unlock()
	default:
		tok := c.queue[0]
		c.queue = c.queue[1:]
		s := b.tokens[tok]
		b.stored[s.key] = append(b.stored[s.key], s.seq)
		b.mu.Unlock()
		b.w.Answer(tok, nil)
	}
	return true
}

// TestConnWriterStress sends numbered events of several keys through an
// OrderedSink over a ConnWriter whose connections die at random moments,
// some after storing a part of what they were sent, and whose dials fail
// at random; each key's sender resends from its first failed event after
// Resume, as an outbox relay does. Some rounds close the writer at a
// random moment. It checks that every send is answered once, that the
// broker never stores an event of a key before every earlier one was
// stored (no later send overtook a failed one on a new connection), and
// that a round not closed delivers everything.
func TestConnWriterStress(t *testing.T) {
	deadline := time.Now().Add(*connWriterStress)
	for round := uint64(0); round == 0 || time.Now().Before(deadline); round++ {
		t.Run(fmt.Sprint("seed", round), func(t *testing.T) { connWriterRound(t, round) })
		if t.Failed() {
			return
		}
	}
}

func connWriterRound(t *testing.T, seed uint64) {
	const keys, events, window = 4, 60, 5
	b := newFakeBroker(t, seed)
	sink, err := transport.NewOrderedSink[string, int](b.w)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	closeAt := -1
	if rng.IntN(3) == 0 {
		closeAt = rng.IntN(400)
	}
	ctx := context.Background()
	var senders sync.WaitGroup
	var answers atomic.Int64
	stop := make(chan struct{})
	var closing sync.WaitGroup
	for k := range keys {
		key := fmt.Sprint("k", k)
		senders.Go(func() {
			next := 1
			for next <= events {
				n := min(window, events-next+1)
				errs := make([]error, n)
				var wave sync.WaitGroup
				for i := range n {
					wave.Add(1)
					var once atomic.Bool
					sink.SendAsync(ctx, key, next+i, func(err error) {
						if !once.CompareAndSwap(false, true) {
							t.Errorf("%s %d answered twice", key, next+i)
						}
						errs[i] = err
						answers.Add(1)
						wave.Done()
					})
				}
				wave.Wait()
				first := -1
				for i, err := range errs {
					if err != nil && first < 0 {
						first = i
					}
					if err != nil && errors.Is(err, runtime.ErrClosed) {
						return
					}
				}
				if first < 0 {
					next += n
					continue
				}
				sink.Resume(key)
				next += first
			}
		})
	}
	go func() {
		senders.Wait()
		close(stop)
	}()
broker:
	for steps := 0; ; steps++ {
		if steps == closeAt { // it waits for answers: not on the broker's goroutine
			closing.Go(func() {
				if err := sink.Close(ctx); err != nil {
					t.Errorf("close: %v", err)
				}
			})
		}
		if !b.step() {
			select {
			case <-stop:
				break broker
			default:
				goruntime.Gosched() // the senders are between waves
			}
		}
	}
	closing.Wait()
	if closeAt < 0 {
		_ = sink.Close(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range keys {
		key := fmt.Sprint("k", k)
		top := 0
		for i, seq := range b.stored[key] {
			if seq > top+1 {
				t.Fatalf("%s: %d stored after only 1..%d (log %v): a send overtook a failed one", key, seq, top, b.stored[key][:i+1])
			}
			top = max(top, seq)
		}
		if closeAt < 0 && top != events {
			t.Fatalf("%s: %d of %d stored", key, top, events)
		}
	}
}
