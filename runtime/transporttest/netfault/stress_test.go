package netfault_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

var stressFor = flag.Duration("netfault.stress", time.Second, "how long TestStress attacks a Net (run long with e.g. -netfault.stress=3m)")

// TestStress runs clients that echo numbered lines through a Net while it
// is cut, stalled and resumed at random, and closed at a random moment.
// Each client checks that what comes back is what it sent, in order, with
// nothing missing in the middle (a connection may end, never skip or
// reorder bytes); the figures never go below zero; Close returns and
// leaves no goroutine behind (goleak, in TestMain).
func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	e := newEcho(t)
	n := netfault.New()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var lines, conns, broken atomic.Int64
	var mu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	for w := range 8 {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				c, err := n.DialContext(ctx, "tcp", e.addr())
				cancel()
				if err != nil {
					if err == netfault.ErrClosed {
						return
					}
					continue
				}
				conns.Add(1)
				// A stalled Net answers nothing: the client gives up on a
				// line after a while, as clients do, and dials again.
				r := bufio.NewReader(c)
				for i := 0; ; i++ {
					_ = c.SetDeadline(time.Now().Add(50 * time.Millisecond))
					line := fmt.Sprintf("w%d c%d line %d", w, seq, i)
					if _, err := io.WriteString(c, line+"\n"); err != nil {
						broken.Add(1)
						break
					}
					got, err := r.ReadString('\n')
					if err != nil {
						broken.Add(1)
						break
					}
					if got != line+"\n" {
						fail("sent %q, got back %q", line, got)
						break
					}
					lines.Add(1)
					select {
					case <-stop:
						_ = c.Close()
						return
					default:
					}
				}
				_ = c.Close()
			}
		})
	}
	faults := map[string]int{}
	deadline := time.Now().Add(*stressFor)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // the moments of the faults, not a synchronisation
		switch rng.IntN(3) {
		case 0:
			n.Cut()
			faults["cut"]++
		case 1:
			n.Stall()
			faults["stall"]++
		default:
			n.Resume()
			faults["resume"]++
		}
		if s := n.Stats(); s.Open < 0 || s.Held < 0 {
			fail("figures out of bounds: %+v", s)
		}
	}
	// Close at a random moment, while clients still talk (or wait).
	if err := n.Close(); err != nil {
		t.Error(err)
	}
	close(stop)
	wg.Wait()
	if s := n.Stats(); s.Open != 0 || s.Held != 0 {
		t.Errorf("after Close: %+v, want nothing open or held", s)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range errs[:min(len(errs), 5)] {
		t.Error(e)
	}
	t.Logf("%d lines echoed over %d connections, %d of them broken by faults; faults %v; figures %+v", lines.Load(), conns.Load(), broken.Load(), faults, n.Stats())
	if lines.Load() == 0 {
		t.Error("no line went through: the stress tried nothing")
	}
}
