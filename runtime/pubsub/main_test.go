package pubsub_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The Pub/Sub client's stream keep-alive loop looks whether its
		// stream is done only when its 30-second ping ticker fires, so it
		// outlives Receive by up to 30 seconds (pubsub v2.9.0,
		// iterator.go streamKeepAliveHandler); it holds nothing of ours.
		goleak.IgnoreTopFunction("cloud.google.com/go/pubsub/v2.(*messageIterator).streamKeepAliveHandler"),
		// OpenCensus, which the client links, starts its worker at init.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	)
}
