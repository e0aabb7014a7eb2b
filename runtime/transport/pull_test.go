package transport_test

import (
	"errors"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// pullRig is a Pull over deliveries that are their sequence numbers, with
// a gate the test opens and a log of the acknowledgements sent.
type pullRig struct {
	p      *transport.Pull[uint64, uint64]
	open   atomic.Bool
	heldAt atomic.Int64 // what the gate was told last
	mu     sync.Mutex
	acked  []uint64
}

func newPullRig(t *testing.T, gated bool, bad uint64) *pullRig {
	r := &pullRig{}
	cfg := transport.PullConfig[uint64, uint64]{Name: "test: unit", Buffer: 16,
		Check: func(d uint64) (uint64, error) {
			if d == bad {
				return 0, errors.New("another holder's")
			}
			return d, nil
		},
		Take: func(d, _ uint64) uint64 { return d },
		Ack: func(m uint64) {
			r.mu.Lock()
			r.acked = append(r.acked, m)
			r.mu.Unlock()
		},
	}
	if gated {
		cfg.Gate = func(held int) bool {
			r.heldAt.Store(int64(held))
			return r.open.Load()
		}
		cfg.GatePoll = time.Millisecond
	}
	p, err := transport.NewPull(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.p = p
	return r
}

func TestPullRefusesAnIncompleteConfig(t *testing.T) {
	if _, err := transport.NewPull(transport.PullConfig[int, int]{}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("NewPull without funcs: %v, want ErrInvalidConfig", err)
	}
}

// The gate holds the first deliveries until it opens, then lets them
// through in sequence order, and the later ones as they come; acks
// queued by Settled are sent; Stop with flush sends the last ones and
// returns what is held, in order.
func TestPullGatesThenPassesInOrder(t *testing.T) {
	r := newPullRig(t, true, 0)
	for _, d := range []uint64{5, 3, 4} { // the last holder's 3 and 4 come back after 5
		r.p.Push(d)
	}
	for r.heldAt.Load() != 3 {
		goruntime.Gosched() // until the gate was asked with all three held
	}
	r.open.Store(true)
	var got []uint64
	for len(got) < 3 {
		got = append(got, <-r.p.Deliveries())
	}
	r.p.Push(6)
	got = append(got, <-r.p.Deliveries())
	if !slices.Equal(got, []uint64{3, 4, 5, 6}) {
		t.Fatalf("delivered %v, want [3 4 5 6]", got)
	}
	r.p.Settled(4)
	r.p.Settled(4) // settled twice: acknowledged once
	r.p.Settled(6)
	rest := r.p.Stop(true, nil)
	if !slices.Equal(rest, []uint64{3, 5}) {
		t.Fatalf("held at Stop %v, want [3 5]", rest)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Sort(r.acked); !slices.Equal(r.acked, []uint64{4, 6}) {
		t.Fatalf("acknowledged %v, want [4 6]", r.acked)
	}
}

// A delivery of a message held (its lease lapsed) or one Check refuses
// loses the unit: the deliveries close and Err says why.
func TestPullLosesTheUnit(t *testing.T) {
	for _, c := range []struct {
		name   string
		pushes []uint64
		bad    uint64
		want   string
	}{
		{"delivered again while held", []uint64{1, 2, 1}, 0, "message 1 delivered again while held"},
		{"refused by Check", []uint64{1, 9}, 9, "another holder's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newPullRig(t, false, c.bad)
			go func() {
				for _, d := range c.pushes {
					r.p.Push(d)
				}
			}()
			n := 0
			for range r.p.Deliveries() {
				n++
			}
			<-r.p.Lost()
			if err := r.p.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Err %v, want %q", err, c.want)
			}
			if rest := r.p.Stop(false, nil); len(rest) != n {
				t.Fatalf("held %v at Stop after %d deliveries", rest, n)
			}
		})
	}
}

// Without flush, Stop sends nothing more; what was pushed and not taken
// is dropped (the broker delivers it again), and a Push after Stop does
// not wait.
func TestPullStopWithoutFlushSendsNothing(t *testing.T) {
	r := newPullRig(t, true, 0) // the gate stays shut: nothing is delivered
	r.p.Push(1)
	r.p.Push(2)
	halted := false
	rest := r.p.Stop(false, func() { halted = true })
	r.p.Push(3)
	if !halted {
		t.Fatal("halt did not run")
	}
	if len(rest) > 2 {
		t.Fatalf("held %v", rest)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.acked) != 0 {
		t.Fatalf("acknowledged %v", r.acked)
	}
	if _, open := <-r.p.Deliveries(); open {
		t.Fatal("deliveries open after Stop")
	}
}
