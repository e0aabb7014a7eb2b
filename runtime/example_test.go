package runtime_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/runtime"
)

// A ledger whose deposits and withdrawals must apply in order per account,
// while accounts run in parallel.
func Example() {
	var mu sync.Mutex
	balances := map[string]int{}
	apply := func(ctx context.Context, account string, amount int) error {
		mu.Lock()
		defer mu.Unlock()
		if balances[account]+amount < 0 {
			return runtime.Permanent(fmt.Errorf("%s would go negative", account))
		}
		balances[account] += amount
		return nil
	}
	e, err := runtime.New(apply, runtime.Config[string, int]{
		MaxActive: 8,
		Backlog:   runtime.Backlog{PerKey: 100, Total: 10000, WhenFull: runtime.Block},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, amount := range []int{100, -30, -50, 10} {
		_ = e.Submit(ctx, "alice", amount)
		_ = e.Submit(ctx, "bob", amount*2)
	}
	if err := e.Close(ctx); err != nil {
		panic(err)
	}
	fmt.Println(balances["alice"], balances["bob"], e.Stats().Handled)
	// Output: 30 60 8
}
