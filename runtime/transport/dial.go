package transport

import "context"

// Dial runs dial, a client's connect that takes no context, on a goroutine
// and returns its result, or ctx's error as soon as ctx ends (a broker that
// accepts the socket and never answers the handshake must not hold a
// consumer's Close). A connection that comes after ctx ended is given to
// abandon, which closes it.
func Dial[C any](ctx context.Context, dial func() (C, error), abandon func(C)) (C, error) {
	type result struct {
		c   C
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := dial()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				abandon(r.c)
			}
		}()
		var zero C
		return zero, ctx.Err()
	}
}
