package rabbitmq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// A consumer whose network to the broker stalls (its connection open,
// nothing answered) while a handler runs: Close with a deadline, or the end
// of Run's context, makes Run return while the network is still stalled,
// although the client would wait for the broker's answer to its closes
// until the heartbeats give up (a minute here). The broker returns the
// messages when the connection dies, and the next consumer applies them in
// order.
//
// At 88ccaa5 Run waited for the channels' and the connection's close-ok
// (12 s after a Close with a 3 s deadline with the default heartbeat of
// 10 s; here it would be minutes).
func TestStopWhileStalled(t *testing.T) {
	for _, stop := range []string{"close", "context"} {
		t.Run(stop, func(t *testing.T) {
			topo := topology(t, 1)
			declared(t, topo)
			n := netfault.New()
			t.Cleanup(func() { _ = n.Close() })
			j := newJournal()
			started := make(chan struct{}, 1)
			r := start(t, rabbitmq.Config[event]{Topology: topo, DrainTimeout: time.Second,
				AMQP: amqp.Config{Dial: netDial(n), Heartbeat: time.Minute}},
				func(ctx context.Context, _ string, e event) error {
					if e.Key == "a" && e.Seq == 1 {
						select {
						case started <- struct{}{}:
						default:
						}
						<-ctx.Done() // until the consumer gives up on it
						return ctx.Err()
					}
					j.add(e)
					return nil
				}, nil)
			p := producer(t, topo)
			send(t, p, event{Key: "a", Seq: 1}, event{Key: "a", Seq: 2}, event{Key: "b", Seq: 1})
			await(t, started, "the slow handler to start")
			n.Stall()
			begun := time.Now()
			switch stop {
			case "close":
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				err := r.c.Close(ctx)
				cancel()
				t.Logf("Close returned %v after %v", err, time.Since(begun).Round(time.Millisecond))
			case "context":
				r.cancel()
			}
			select {
			case err := <-r.done:
				t.Logf("Run returned %v after %v, the network still stalled", err, time.Since(begun).Round(time.Millisecond))
				if stop == "context" && !errors.Is(err, context.Canceled) {
					t.Errorf("Run returned %v, want context.Canceled", err)
				}
				r.done <- err // for the cleanup
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return within 30s of the stop while the network was stalled")
			}
			n.Cut() // the stalled connection dies: the broker returns its messages
			r2 := start(t, rabbitmq.Config[event]{Topology: topo}, func(_ context.Context, _ string, e event) error {
				j.add(e)
				return nil
			}, nil)
			await(t, j.reached(3), "every event, by the next consumer")
			r2.stop(t)
			j.inOrder(t, map[string]int{"a": 2, "b": 1}, true)
		})
	}
}
