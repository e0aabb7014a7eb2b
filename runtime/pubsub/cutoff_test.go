package pubsub_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// clientVia returns a client of the fake whose connections pass n; it
// closes when the test ends.
func (f *fake) clientVia(t *testing.T, n *netfault.Net) *pubsub.Client {
	t.Helper()
	addr, err := n.Proxy(f.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	// The publisher's Publish calls are retried by gax, not by gRPC, with
	// pauses that grow fourfold up to a minute: after an outage of a few
	// seconds under load, a publish could sleep past the test's timeout
	// once the network was back (ProducerConnectionKilled failed so in
	// CI: its flush waited 60 s). The same codes, paused at most a second.
	retry := gax.WithRetry(func() gax.Retryer {
		return gax.OnCodes([]codes.Code{codes.Aborted, codes.Canceled, codes.Internal, codes.ResourceExhausted, codes.Unknown, codes.Unavailable, codes.DeadlineExceeded},
			gax.Backoff{Initial: 50 * time.Millisecond, Max: time.Second, Multiplier: 1.6})
	})
	config := &pubsub.ClientConfig{TopicAdminCallOptions: &vkit.TopicAdminCallOptions{Publish: []gax.CallOption{gax.WithTimeout(time.Minute), retry}}}
	cl, err := pubsub.NewClientWithConfig(context.Background(), project, config,
		option.WithEndpoint(addr),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		// gRPC waits longer between reconnections the longer a network
		// stays down (up to 2 minutes by default): the tests' outages
		// would leave the client waiting on that clock, not on the
		// network. A backoff of at most a second keeps what they check
		// and not the wait.
		option.WithGRPCDialOption(grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// newNet returns a Net closed when the test ends.
func newNet(t *testing.T) *netfault.Net {
	n := netfault.New()
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// hang bounds the wait for Run to return while the consumer is cut off:
// far longer than its deadlines, far shorter than the client's retries of
// its acknowledgements (60 s a call) that Run used to wait for.
const hang = 30 * time.Second

// A consumer cut off from Pub/Sub (its connections reset, or stalled)
// while a handler runs and messages wait: Close with a deadline, or the end
// of Run's context, makes Run return while the network is still down,
// without waiting for the client's acknowledgements; what the consumer
// settled and could not confirm is counted; the messages come again to the
// next consumer, every key's in order.
//
// At 88ccaa5 Run waited for the client's graceful shutdown
// (ReceiveSettings.ShutdownOptions nil), which retried its acknowledgements
// for minutes: Close returned its deadline's error and Run did not return.
func TestCloseAndRunWhileCutOff(t *testing.T) {
	t.Parallel() // its own pstest server: it waits on ack deadlines, not on the CPU
	for _, fault := range []string{"cut", "stall"} {
		for _, stop := range []string{"close", "context"} {
			t.Run(fault+"/"+stop, func(t *testing.T) {
				t.Parallel()
				f := newFake(t)
				n := newNet(t)
				ks := keys(4)
				started := make(chan struct{})
				var once sync.Once
				b := newBook(len(ks) * 3)
				cl := f.clientVia(t, n)
				m := f.start(t, memberOpts{
					cfg: func(c *ps.Config[ev]) {
						c.Client = cl
						c.DrainTimeout = time.Second
					},
					handler: func(ctx context.Context, _ string, e ev) error {
						if e.Key == ks[0] && e.Seq == 1 {
							once.Do(func() { close(started) })
							<-ctx.Done() // runs until the consumer gives up on it
							return ctx.Err()
						}
						b.apply("a", e)
						return nil
					},
				})
				f.produce(t, ks, 1, 3)
				select {
				case <-started:
				case <-time.After(hang):
					t.Fatal("the slow handler did not start")
				}
				if fault == "cut" {
					n.Cut()
				} else {
					n.Stall()
				}
				begun := time.Now()
				switch stop {
				case "close":
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					err := m.c.Close(ctx)
					cancel()
					t.Logf("Close returned %v after %v", err, time.Since(begun).Round(time.Millisecond))
				case "context":
					m.cancel()
				}
				select {
				case err := <-m.done:
					t.Logf("Run returned %v after %v, the network still %s", err, time.Since(begun).Round(time.Millisecond), fault)
				case <-time.After(hang):
					t.Fatalf("Run did not return within %v of the stop while the network was %s", hang, fault)
				}
				// The stalled connections die too, as their keepalives would
				// end them: the server then gives their messages to others.
				n.Cut()
				s := m.c.Stats()
				if s.Unconfirmed == 0 {
					t.Errorf("stats %+v: the messages settled while Pub/Sub was unreachable are not counted as unconfirmed", s)
				}
				_ = m.engine.Close(context.Background())
				// The client's Receive, which Run did not wait for, ends
				// once Pub/Sub is reachable again or the client closes.
				n.Resume()
				_ = cl.Close()
				select {
				case <-ps.ReceiveReturned(m.c):
					t.Logf("the client's Receive returned %v after the stop", time.Since(begun).Round(time.Millisecond))
				case <-time.After(2 * time.Minute):
					t.Fatal("the client's Receive did not return after the network came back and the client closed")
				}

				// The next consumer gets them all, in order.
				next := f.start(t, memberOpts{handler: b.handler("b")})
				b.Wait(t, 60*time.Second)
				next.stop(t)
				if _, _, skips, _ := b.Snapshot(); len(skips) > 0 {
					t.Errorf("events handled before their predecessor: %v", skips)
				}
			})
		}
	}
}
