package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Withdraw takes back, in every subscriber, the accepted events whose tag
// match selects and that have not started (see Engine.Withdraw), and returns
// how many it withdrew in all. The subscribers withdraw at once, each
// waiting up to ctx's end for the selected events its running lanes took,
// so that each gets the whole of ctx's time before the running attempts of
// selected events are cancelled. Its error joins the subscribers' errors,
// each naming its subscriber.
func (t *Topic[K, E]) Withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	subs := t.Subscribers()
	counts := make([]int, len(subs))
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		wg.Go(func() {
			var err error
			if counts[i], err = s.Withdraw(ctx, match); err != nil {
				errs[i] = fmt.Errorf("withdraw from %s: %w", s.cfg.Name, err)
			}
		})
	}
	wg.Wait()
	n := 0
	for _, c := range counts {
		n += c
	}
	return n, errors.Join(errs...)
}
