package sqs_test

import (
	"context"
	"testing"
	"time"

	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// A consumer that cannot reach SQS when it starts (its network cut) keeps
// trying the check of its queue, instead of ending Run with the network's
// error, and consumes once SQS is reachable.
//
// The stress with network faults found Run ending so when a cut came
// right after a consumer started.
func TestStartsOnceSQSIsReachable(t *testing.T) {
	q := newQueues(t, "start", 2*time.Second)
	n := newNet(t)
	n.Cut()
	b := make(chan ev, 3)
	m := q.start(t, memberOpts{
		cfg: func(c *oq.Config[ev]) { c.Client = clientVia(t, n) },
		handler: func(_ context.Context, _ string, e ev) error {
			b <- e
			return nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// It tried, and tried again (the SDK makes three attempts a call).
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Refused >= 6 || len(m.done) > 0 }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.done:
		t.Fatalf("Run returned %v while SQS was unreachable, want it to keep trying", err)
	default:
	}
	n.Resume()
	p := q.producer(t)
	for seq := 1; seq <= 3; seq++ {
		if err := p.Send(ctx, "k", ev{"k", seq}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := 1; seq <= 3; seq++ {
		select {
		case e := <-b:
			if e.Seq != seq {
				t.Fatalf("handled %d, want %d", e.Seq, seq)
			}
		case <-ctx.Done():
			t.Fatalf("event %d not handled once SQS was reachable", seq)
		}
	}
	m.stop(t)
}
