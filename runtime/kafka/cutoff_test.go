package kafka_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// A consumer whose network to the cluster stalls (its connections open,
// nothing answered) while a handler runs: Close with a deadline, or the end
// of Run's context, makes Run return while the network is still stalled,
// although the client would wait minutes for the broker's answers
// (RequestTimeoutOverhead here, 5 minutes). Its partitions go to the next
// member when its session times out, and every event is applied in order.
//
// At 88ccaa5 Run waited in franz-go's Close for the leave of the group
// (53 s after a Close with a 3 s deadline, 32 s after the end of Run's
// context, with the default overhead of 10 s).
func TestStopWhileStalled(t *testing.T) {
	for _, stop := range []string{"close", "context"} {
		t.Run(stop, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic), kfake.SeedTopics(1, dlt),
				kfake.GroupMinSessionTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			n := netfault.New()
			t.Cleanup(func() { _ = n.Close() })
			ks := keys(4)
			b := newBook(len(ks) * 3)
			started := make(chan struct{})
			var once sync.Once
			m := startMember(t, c, "g", memberOpts{
				cfg: func(cfg *kafka.Config[ev]) {
					cfg.ClientOpts = append(cfg.ClientOpts, kgo.Dialer(n.DialContext),
						kgo.SessionTimeout(3*time.Second), kgo.RequestTimeoutOverhead(5*time.Minute))
				},
				handler: func(ctx context.Context, _ string, e ev) error {
					if e.Key == ks[0] && e.Seq == 1 {
						once.Do(func() { close(started) })
						<-ctx.Done() // until the consumer gives up on it
						return ctx.Err()
					}
					b.apply("a", e)
					return nil
				},
			})
			produce(t, c, ks, 1, 3)
			select {
			case <-started:
			case <-time.After(time.Minute):
				t.Fatal("the slow handler did not start")
			}
			n.Stall()
			begun := time.Now()
			switch stop {
			case "close":
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				err := m.c.Close(ctx)
				cancel()
				t.Logf("Close returned %v after %v", err, time.Since(begun).Round(time.Millisecond))
				defer m.cancel() // not before Run returned: that would make it stop as a crash
			case "context":
				m.cancel()
			}
			select {
			case err := <-m.done:
				t.Logf("Run returned %v after %v, the network still stalled", err, time.Since(begun).Round(time.Millisecond))
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return within 30s of the stop while the network was stalled")
			}
			_ = m.engine.Close(context.Background())
			n.Cut() // the stalled connections die, as keepalives would end them
			next := startMember(t, c, "g", memberOpts{handler: b.handler("b")})
			b.Wait(t, time.Minute)
			next.stop(t)
			if _, _, skips, _ := b.Snapshot(); len(skips) > 0 {
				t.Errorf("events handled before their predecessor: %v", skips)
			}
		})
	}
}
