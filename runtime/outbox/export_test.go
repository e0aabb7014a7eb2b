package outbox

import "context"

// RoundOf returns the number of the relay round a send belongs to, from
// its context; 0 outside a round.
func RoundOf(ctx context.Context) uint64 {
	id, _ := ctx.Value(roundKey{}).(uint64)
	return id
}

// OnClaim makes r call fn when each of its rounds has claimed events,
// before it sends them. Set it before Run.
func OnClaim[K comparable, E any](r *Relay[K, E], fn func(round uint64)) {
	r.hooks.claimed = fn
}

// OnRoundEnd makes r call fn when each of its rounds that claimed events
// ends, with whether its marks committed. Set it before Run.
func OnRoundEnd[K comparable, E any](r *Relay[K, E], fn func(round uint64, committed bool)) {
	r.hooks.ended = fn
}
