package pubsub

import "github.com/ordergen/ordergen/runtime/transport"

// A message's trace context travels in its attributes (transport.Trace):
// the producer writes the one its send's context carries, the consumer
// reads it for the tracers of its subscribers.

// addTrace adds t's attributes to attrs.
func addTrace(attrs map[string]string, t transport.Trace) {
	for _, h := range t.Headers() {
		attrs[h.Key] = h.Value
	}
}

// traceOf returns the trace context of a message with attributes attrs.
func traceOf(attrs map[string]string) transport.Trace {
	return transport.TraceFrom(func(k string) string { return attrs[k] })
}
