package rabbitmq

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime/transport"
)

// A message's trace context travels in its headers (transport.Trace): the
// producer writes the one its send's context carries, the consumer reads
// it for the tracers of its subscribers.

// addTrace adds t's headers to hs.
func addTrace(hs amqp.Table, t transport.Trace) {
	for _, h := range t.Headers() {
		hs[h.Key] = h.Value
	}
}

// traceOf returns the trace context of a delivery with headers hs.
func traceOf(hs amqp.Table) transport.Trace {
	return transport.TraceFrom(func(k string) string {
		s, _ := hs[k].(string)
		return s
	})
}
