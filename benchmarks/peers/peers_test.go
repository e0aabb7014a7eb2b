package peers_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// recorder is a slow, simple and independent check of a peer: under a
// mutex it records each key's events in handling order and catches two
// events of one key running at once.
type recorder struct {
	mu      sync.Mutex
	got     map[string][]uint32
	running map[string]bool
	overlap bool
	badKey  bool
}

func (r *recorder) handle(key string, ev peers.Event) {
	r.mu.Lock()
	if r.running[key] {
		r.overlap = true
	}
	r.running[key] = true
	if key != "k"+strconv.Itoa(int(ev.Key)) {
		r.badKey = true
	}
	r.mu.Unlock()
	time.Sleep(time.Duration(ev.Index%3) * time.Microsecond) // let later events overtake
	r.mu.Lock()
	r.running[key] = false
	r.got[key] = append(r.got[key], ev.Seq)
	r.mu.Unlock()
}

// TestPeers runs every peer on a few hundred events over a few keys, one
// of them hot, and checks that each event is handled exactly once, with
// the right key, and, for the ordered peers, in order and one at a time.
func TestPeers(t *testing.T) {
	const events, keys = 600, 7
	for _, spec := range peers.All() {
		t.Run(spec.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r := &recorder{got: map[string][]uint32{}, running: map[string]bool{}}
			p, err := spec.New(r.handle, 4)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint32{}
			for i := range events {
				k := uint32(i % keys)
				if i%2 == 0 {
					k = 0 // the hot key
				}
				key := "k" + strconv.Itoa(int(k))
				want[key]++
				if err := p.Submit(ctx, key, peers.Event{Key: k, Seq: want[key], Index: uint32(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if r.badKey {
				t.Error("handler got an event with another key")
			}
			for key, n := range want {
				got := r.got[key]
				if len(got) != int(n) {
					t.Errorf("%s: %d events handled, want %d", key, len(got), n)
					continue
				}
				seen := make(map[uint32]bool, n)
				for i, s := range got {
					if spec.Ordered && s != uint32(i+1) {
						t.Errorf("%s: event %d handled at position %d", key, s, i+1)
						break
					}
					if seen[s] {
						t.Errorf("%s: event %d handled twice", key, s)
					}
					seen[s] = true
				}
			}
			if spec.Ordered && r.overlap {
				t.Error("two events of one key ran at once")
			}
		})
	}
}
