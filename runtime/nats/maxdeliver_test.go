package nats_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	ogn "github.com/ordergen/ordergen/runtime/nats"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// With MaxDeliver 2, a message that two consumers took and never
// acknowledged (each crashed while its handler ran) goes, on its third
// delivery, to the dead-letter stream instead of a handler, with the
// reason max-deliveries.
func TestMaxDeliverGoesToTheDeadLetters(t *testing.T) {
	topo := ogn.Topology{Name: fmt.Sprintf("maxdeliver-%d", time.Now().UnixNano()), Partitions: 1}
	st := newStream(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Producer(t, transporttest.ProducerOptions{}).Send(ctx, "k", transporttest.Event{Key: "k", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	run := func(name string, handle func(context.Context) error) (crash func()) {
		c, err := ogn.NewConsumer[string, transporttest.Event](ogn.Config[transporttest.Event]{
			URL: serverURL, Topology: topo, Codec: transporttest.Codec{}, AckWait: lease, PinnedTTL: pinnedTTL, MaxDeliver: 2,
			Name: name, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		e, err := runtime.New(func(ctx context.Context, _ string, _ transporttest.Event) error { return handle(ctx) },
			runtime.Config[string, transporttest.Event]{Name: name, OnOutcome: c.OnOutcome, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(rctx, transport.EngineTarget(e)) }()
		return func() {
			ended, now := context.WithCancel(context.Background())
			now()
			_ = e.Close(ended) // at once, as a crash
			stop()
			<-done
		}
	}
	for i := range 2 {
		started := make(chan struct{})
		crash := run(fmt.Sprintf("c%d", i), func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatalf("delivery %d never came", i+1)
		}
		crash()
	}
	crash := run("c2", func(context.Context) error {
		t.Error("the message came a third time")
		return nil
	})
	defer crash()
	dls, err := st.DeadLetters(ctx)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters %v, %v: want the message", dls, err)
	}
	if dls[0].Key != "k" || dls[0].Reason != string(transport.ReasonMaxDeliveries) {
		t.Errorf("dead letter of key %q with reason %q, want k and %q", dls[0].Key, dls[0].Reason, transport.ReasonMaxDeliveries)
	}
}
