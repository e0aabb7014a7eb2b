package kafka

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/transport"
)

// A record's trace context travels in its headers (transport.Trace): the
// producer writes the one its send's context carries, the consumer reads
// it (decode, in its one pass over the headers) for the tracers of its
// subscribers.

// appendTrace appends t's headers to hs.
func appendTrace(hs []kgo.RecordHeader, t transport.Trace) []kgo.RecordHeader {
	for _, h := range t.Headers() {
		hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	return hs
}
