package kafka

import (
	"context"

	"github.com/ordergen/ordergen/runtime"
)

// Keyed is an event that knows its ordering key. Generated event interfaces
// (AccountEvent) are Keyed.
type Keyed[K comparable] interface {
	EventKey() K
}

// Target is what a Consumer feeds: per-key lanes with one or more
// subscribers. A generated dispatcher implements it with its SubmitTagged
// method; EngineTarget adapts a runtime.Engine.
//
// SubmitTagged hands event, with tag, to the subscribers numbered from and
// up (in subscription order) and returns how many subscribers hold it
// afterwards. Each of them later reports the event's outcome, with tag, to
// the consumer's OnOutcome. At the first subscriber that refuses the event
// it stops and returns the refusal; the consumer calls it again with from
// set to the number returned, so that no subscriber gets an event twice.
// The consumer passes a context that is already done, so that a full
// backlog refuses at once (runtime.ErrBacklogFull) under every policy: it
// then pauses the partition instead of blocking.
type Target[E any] interface {
	SubmitTagged(ctx context.Context, event E, tag uint64, from int) (int, error)
}

// EngineTarget returns a Target that feeds engine, a single subscriber whose
// Config.OnOutcome must be the consumer's OnOutcome.
func EngineTarget[K comparable, E Keyed[K]](engine *runtime.Engine[K, E]) Target[E] {
	return engineTarget[K, E]{engine}
}

type engineTarget[K comparable, E Keyed[K]] struct{ e *runtime.Engine[K, E] }

func (t engineTarget[K, E]) SubmitTagged(ctx context.Context, event E, tag uint64, from int) (int, error) {
	if from >= 1 {
		return 1, nil
	}
	if err := t.e.SubmitTagged(ctx, event.EventKey(), event, tag); err != nil {
		return 0, err
	}
	return 1, nil
}
