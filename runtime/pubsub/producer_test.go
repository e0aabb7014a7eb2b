package pubsub_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ordergen/ordergen/runtime"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
)

// failNext fails the next Publish calls of the fake while on.
type failNext struct{ on atomic.Bool }

func (f *failNext) React(any) (bool, any, error) {
	if f.on.Load() {
		return true, nil, status.Error(codes.InvalidArgument, "refused by the test")
	}
	return false, nil, nil
}

// A failed publish pauses its key, in the producer and in the Pub/Sub
// publisher: the key's later sends fail at once with ErrKeyPaused, other
// keys go on, and Resume lets the key through again (ResumePublish
// included: without it the publisher would refuse the key's messages).
func TestProducerResumesKeyAfterFailure(t *testing.T) {
	fail := &failNext{}
	f := newFakeWith(t, []pstest.ServerReactorOption{{FuncName: "Publish", Reactor: fail}})
	p := f.producer(t)
	ctx := context.Background()
	fail.on.Store(true)
	if err := p.Send(ctx, "k", ev{"k", 1}); err == nil {
		t.Fatal("a publish the server refused succeeded")
	}
	fail.on.Store(false)
	if err := p.Send(ctx, "k", ev{"k", 2}); !errors.Is(err, transport.ErrKeyPaused) {
		t.Fatalf("the next send of the key: %v, want ErrKeyPaused", err)
	}
	if err := p.Send(ctx, "other", ev{"other", 1}); err != nil {
		t.Fatalf("another key: %v", err)
	}
	if _, ok := p.Paused()["k"]; !ok {
		t.Errorf("Paused() = %v, want k", p.Paused())
	}
	p.Resume("k")
	if err := p.Send(ctx, "k", ev{"k", 1}); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	b := newBook(2)
	m := f.start(t, memberOpts{handler: b.handler("m")})
	b.Wait(t, 30*time.Second)
	m.stop(t)
}

func TestOrderingKey(t *testing.T) {
	if got, _ := ps.OrderingKey("a b"); got != "a b" {
		t.Errorf("OrderingKey(%q) = %q", "a b", got)
	}
	long := strings.Repeat("k", 1025)
	if got, _ := ps.OrderingKey(long); !strings.HasPrefix(got, "sha256:") || len(got) != 7+64 {
		t.Errorf("OrderingKey of 1025 bytes = %q, want a sha256: key", got)
	}
	if got, _ := ps.OrderingKey(uint16(7)); got != "7" {
		t.Errorf("OrderingKey(7) = %q", got)
	}
	if _, err := ps.OrderingKey(1.5); err == nil {
		t.Error("a float key was accepted")
	}
}

// A subscription without message ordering, and a publisher without it,
// are refused.
func TestRefusesUnorderedConfig(t *testing.T) {
	f := newFake(t, func(s *pubsubpb.Subscription) { s.EnableMessageOrdering = false })
	c, err := ps.NewConsumer[string, ev](ps.Config[ev]{Client: f.client(t), Subscription: sub, Codec: codec{}, DeadLetterTopic: dlt})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background(), nil); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("Run on an unordered subscription: %v, want ErrInvalidConfig", err)
	}
	pub := f.client(t).Publisher(topic)
	defer pub.Stop()
	if _, err := ps.NewProducer[string, ev](ps.ProducerConfig[ev]{Publisher: pub, Codec: codec{}}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("NewProducer without ordering: %v, want ErrInvalidConfig", err)
	}
}
