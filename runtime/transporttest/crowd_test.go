package transporttest_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// A crowd names its members m1, m2, ..., lets one leave only while two or
// more run, and visits them in the order of their names.
func TestCrowd(t *testing.T) {
	c := transporttest.NewCrowd[int]()
	rng := rand.New(rand.NewPCG(1, 2))
	c.Join(func(name string) int { return 1 })
	if _, _, ok := c.Leave(rng); ok {
		t.Fatal("the last member left")
	}
	for i := 2; i <= 3; i++ {
		c.Join(func(name string) int {
			if want := fmt.Sprint("m", i); name != want {
				t.Errorf("member %d named %s, want %s", i, name, want)
			}
			return i
		})
	}
	name, m, ok := c.Leave(rng)
	if !ok || name != fmt.Sprint("m", m) || c.Len() != 2 {
		t.Fatalf("Leave = %s, %d, %v with %d left; want a member of its own name and 2 left", name, m, ok, c.Len())
	}
	var seen []string
	c.Each(func(name string, m int) { seen = append(seen, name) })
	if len(seen) != 2 || seen[0] >= seen[1] {
		t.Errorf("Each visited %v; want the two members in name order", seen)
	}
}

// ReplayParked replays a parked key, which parks again while its poison is
// not fixed, and applies once the operator fixed it.
func TestReplayParked(t *testing.T) {
	ctx := context.Background()
	key := ""
	for i := 0; key == ""; i++ { // a key whose first event is poison
		if k := fmt.Sprint("k", i); transporttest.Poison(k, 1) {
			key = k
		}
	}
	g := transporttest.NewGuarded()
	e, err := runtime.New(func(ctx context.Context, key string, ev transporttest.Event) error {
		return g.Handle(ctx, key, ev.Seq)
	}, runtime.Config[string, transporttest.Event]{
		Retry: runtime.Retry{Attempts: 1}, OnExhausted: runtime.ParkKey, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	parked := func() int {
		t.Helper()
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		ks, err := e.ParkedKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ks)
	}
	if err := e.Submit(ctx, key, transporttest.Event{Key: key, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if parked() != 1 {
		t.Fatal("the poison event did not park its key")
	}
	produced := map[string]int{key: 1}
	transporttest.ReplayParked(ctx, e, g, produced, false)
	if parked() != 1 || g.Applied()[key] != 0 {
		t.Fatalf("unfixed replay: applied %v; want the key parked again", g.Applied())
	}
	transporttest.ReplayParked(ctx, e, g, produced, true)
	if parked() != 0 || g.Applied()[key] != 1 {
		t.Fatalf("fixed replay: applied %v; want the event applied and nothing parked", g.Applied())
	}
	g.Report(t)
}
