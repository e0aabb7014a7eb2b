package rabbitmq

import (
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Keyed is an event that knows its ordering key. Generated event interfaces
// (AccountEvent) are Keyed.
type Keyed[K comparable] = transport.Keyed[K]

// Target is what a Consumer feeds: per-key lanes with one or more
// subscribers (transport.Target). A generated dispatcher is one;
// EngineTarget adapts a runtime.Engine. Every subscriber must report
// outcomes to the consumer's OnOutcome.
//
// The consumer calls SubmitTagged with a context that is already done, so
// that a full backlog refuses at once (runtime.ErrBacklogFull) under every
// policy: the queue's later messages then wait, in order, until an
// outcome makes room. It calls Withdraw when it stops consuming a queue,
// selecting that queue's events by their tags.
type Target[E any] = transport.Target[E]

// EngineTarget returns a Target that feeds engine, a single subscriber
// whose Config.OnOutcome must be the consumer's OnOutcome.
func EngineTarget[K comparable, E Keyed[K]](engine *runtime.Engine[K, E]) Target[E] {
	return transport.EngineTarget(engine)
}
