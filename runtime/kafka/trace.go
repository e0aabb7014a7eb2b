package kafka

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/transport"
)

// A record's trace context travels in its headers (transport.Trace): the
// producer writes the one its send's context carries, the consumer reads
// it for the tracers of its subscribers.

// appendTrace appends t's headers to hs.
func appendTrace(hs []kgo.RecordHeader, t transport.Trace) []kgo.RecordHeader {
	for _, h := range t.Headers() {
		hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	return hs
}

// traceOf returns the trace context of a record with headers hs.
func traceOf(hs []kgo.RecordHeader) transport.Trace {
	var t transport.Trace
	for _, h := range hs {
		switch h.Key {
		case transport.HeaderTraceParent:
			t.Parent = string(h.Value)
		case transport.HeaderTraceState:
			t.State = string(h.Value)
		}
	}
	if t.Parent == "" {
		return transport.Trace{}
	}
	return t
}
