package pubsub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
)

// meterName is the instrumentation scope of the consumer's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/pubsub"

// Consumer receives the messages of one entity from a subscription with
// message ordering and feeds them to per-key lanes (a Target), settling
// each one (ack or nack) once every subscriber reached its outcome. See
// the package documentation for the protocol.
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E transport.Keyed[K]] struct {
	cfg  Config[E]
	dec  transport.Decoder[K, E]
	in   *transport.KeyIntake[K, E, *pubsub.Message]
	life *transport.Lifecycle
	dl   *pubsub.Publisher

	writes sync.WaitGroup // dead-letter publishes under way
	// calls is the context of the consumer's waits on Pub/Sub (dead-letter
	// publishes, the client's last acknowledgements): it ends when Run
	// gives up on them (see stop.go).
	calls context.Context

	mu          sync.Mutex // guards unconfirmed
	unconfirmed uint64     // Stats.Unconfirmed
	// received is closed when the client's Receive returned (or Run ended
	// without calling it): after a stop that did not wait for the client,
	// later than Run.
	received chan struct{}
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E transport.Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := OrderingKey(*new(K)); err != nil {
		return nil, fmt.Errorf("pubsub: %w", err)
	}
	c := &Consumer[K, E]{cfg: cfg, life: transport.NewLifecycle(nil), received: make(chan struct{}),
		dec: transport.Decoder[K, E]{Codec: cfg.Codec, KeyOf: OrderingKey[K]}}
	c.in, err = transport.NewKeyIntake[K](transport.KeyConfig[E, *pubsub.Message]{
		System:      "pubsub",
		MaxInFlight: cfg.MaxInFlight,
		EndTimeout:  cfg.DrainTimeout,
		Fence:       true,
		SweepEvery:  cfg.sweepEvery,
		Settle:      settle,
		DeadLetter:  c.deadLetter,
		Logger:      cfg.Logger,
		Meter:       cfg.MeterProvider,
		Scope:       meterName,
		Attributes: []meter.Attribute{
			{Key: meter.AttrSystem, Value: "gcp_pubsub"},
			{Key: meter.AttrConsumerGroup, Value: fullName(cfg.Client.Project(), "subscriptions", cfg.Subscription)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pubsub: %w", err)
	}
	return c, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a message is settled when
// every subscriber that accepted it reported a final outcome. Outcomes with
// tag 0 (events published in process), and outcomes of messages whose key
// the consumer gave back, are ignored.
func (c *Consumer[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) { c.in.OnOutcome(key, tag, o) }

// Run receives messages and feeds target until Close is called or ctx
// ends. It first checks the subscribers (transport.CheckSubscriptions) and
// returns an error wrapping ErrInvalidConfig for subscribers under the
// drop-oldest or drop-newest backlog policy, without OnOutcome, or parking
// differently from one another, and for a subscription without message
// ordering. While Pub/Sub cannot be reached, it tries that check again
// (warning each time) until Pub/Sub answers, Close is called or ctx ends.
//
// After Close, Run stops receiving, withdraws the events that had not
// started, waits (up to Config.DrainTimeout, and Close's context) for the
// running ones, acknowledges what finished, gives the rest back to Pub/Sub
// (nack), waits for the client to send those calls (up to Close's context
// or another DrainTimeout) and returns nil. When ctx ends instead, Run
// stops at once, as a crash would: the running handlers are cancelled and
// everything not finished is given back, without waiting for the client;
// it returns ctx's error. Either way, what the client had not sent when
// Run stopped waiting is counted (Stats.Unconfirmed). When target fails,
// Run ends like Close and returns the error. Run may be called once.
func (c *Consumer[K, E]) Run(ctx context.Context, target transport.Target[E]) error {
	return c.life.Run(func() error {
		receiving := false
		err := c.run(ctx, target, &receiving)
		if !receiving {
			close(c.received)
		}
		return err
	})
}

func (c *Consumer[K, E]) run(ctx context.Context, target transport.Target[E], receiving *bool) error {
	project := c.cfg.Client.Project()
	subName := fullName(project, "subscriptions", c.cfg.Subscription)
	// Pub/Sub may not be reachable yet: the check is tried again until it
	// answers, Close is called or ctx ends.
	var sub *pubsubpb.Subscription
	closedEarly, err := transport.Check(ctx, c.life.Closing(), c.cfg.Logger, "subscription "+subName, unanswered, func(cctx context.Context) (err error) {
		sub, err = c.cfg.Client.SubscriptionAdminClient.GetSubscription(cctx, &pubsubpb.GetSubscriptionRequest{Subscription: subName})
		return err
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case closedEarly:
		return nil // Close before the consumer took anything
	case status.Code(err) == codes.PermissionDenied:
		// roles/pubsub.subscriber may consume but not read the
		// subscription: the check is skipped, and said so.
		c.cfg.Logger.Warn("ordergen/pubsub: cannot read the subscription to check that it enables message ordering (permission denied); make sure it does", "subscription", subName)
	case err != nil:
		return fmt.Errorf("pubsub: subscription %s: %w", subName, err)
	case !sub.GetEnableMessageOrdering():
		return fmt.Errorf("pubsub: %w: subscription %s does not enable message ordering: a key's messages could be delivered out of order", runtime.ErrInvalidConfig, subName)
	}
	calls, stopCalls := context.WithCancel(context.Background())
	defer stopCalls()
	c.calls = calls
	c.dl = c.cfg.Client.Publisher(fullName(project, "topics", c.cfg.DeadLetterTopic))
	if err := c.in.Start(target); err != nil {
		c.dl.Stop()
		return fmt.Errorf("pubsub: %w", err)
	}
	core := c.in

	s := c.cfg.Client.Subscriber(subName)
	s.ReceiveSettings = c.cfg.ReceiveSettings
	s.ReceiveSettings.MaxOutstandingMessages = c.cfg.MaxInFlight
	s.ReceiveSettings.MaxExtension = c.cfg.MaxExtension
	// The client's graceful shutdown: Receive returns once every message
	// is acknowledged or nacked and the client sent those calls, so that a
	// clean Close loses no acknowledgement. It waits for Pub/Sub as long
	// as it takes; Run does not (see stop.go).
	s.ReceiveSettings.ShutdownOptions = nil
	rctx, stopReceive := context.WithCancel(context.Background())
	defer stopReceive()
	received := make(chan error, 1)
	*receiving = true
	go func() {
		defer close(c.received)
		received <- s.Receive(rctx, func(ctx context.Context, m *pubsub.Message) {
			// The client's flow control bounds the callbacks running, not
			// the messages unacknowledged (a callback returns before its
			// message is settled): the consumer bounds those itself. The
			// client runs callbacks of different keys at once, so room is
			// reserved, not looked at. A callback that waits holds up only
			// the later messages of its key (the client calls a key's
			// callbacks one at a time) and a slot of the client's own flow
			// control.
			if core.Reserve(ctx, nil, 1) <= 0 {
				m.Nack() // stopping
				return
			}
			_ = core.Receive(c.decode(m)) // a failure shows in core.Failed
		})
	}()

	var recvErr error
	var stopped bool // Receive returned
	select {
	case <-ctx.Done():
	case <-c.life.Closing():
	case <-core.Failed():
	case recvErr = <-received:
		stopped = true
	}
	stopReceive() // the client gives back what it receives from now on
	if err := c.stop(ctx.Err() != nil, core, subName, received, stopped, stopCalls); err != nil && recvErr == nil {
		recvErr = err
	}
	switch {
	case core.Err() != nil:
		return core.Err()
	case ctx.Err() != nil:
		return ctx.Err()
	case recvErr != nil:
		return fmt.Errorf("pubsub: receive from %s: %w", subName, recvErr)
	}
	return nil
}

// settle acknowledges a finished message and gives back an unfinished one:
// Pub/Sub then delivers it again, and every later message of its key.
func settle(m *pubsub.Message, st transport.Settlement) {
	if st == transport.Finished {
		m.Ack()
	} else {
		m.Nack()
	}
}

// Close stops the consumer cleanly: Run stops receiving, withdraws the
// events that had not started, waits for the running ones (up to
// Config.DrainTimeout, and ctx), acknowledges what finished and gives the
// rest back. Close returns Run's result, or ctx's error if Run does not
// return before ctx ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error { return c.life.Close(ctx) }

// Stats returns a snapshot of the consumer's counters; zero before Run.
func (c *Consumer[K, E]) Stats() Stats {
	s := statsOf(c.in.Stats())
	c.mu.Lock()
	s.Unconfirmed = c.unconfirmed
	c.mu.Unlock()
	return s
}

// leaseOf is when the client stops extending the lease of a message
// received now.
func (c *Consumer[K, E]) leaseOf() time.Time { return time.Now().Add(c.cfg.MaxExtension) }

// unanswered reports whether err is no answer of Pub/Sub's (unreachable,
// or too slow), not its refusal: trying again may help.
func unanswered(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}
