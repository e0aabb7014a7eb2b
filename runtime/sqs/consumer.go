package sqs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
)

// meterName is the instrumentation scope of the consumer's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/sqs"

// Consumer receives the messages of one entity from a FIFO queue and feeds
// them to per-key lanes (a Target), deleting each one once every
// subscriber reached its outcome. See the package documentation for the
// protocol.
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E transport.Keyed[K]] struct {
	cfg    Config[E]
	dec    transport.Decoder[K, E]
	in     *transport.KeyIntake[K, E, *handle]
	life   *transport.Lifecycle
	leases *transport.Leases[*handle]

	mu         sync.Mutex // guards the settlements queued and stats
	deletes    []*handle
	returns    []*handle // to make visible again (settled Unfinished)
	settleWake chan struct{}
	abandon    atomic.Bool    // killed: nothing more goes to SQS
	writes     sync.WaitGroup // dead-letter sends under way
	stats      counters
	// calls is the context of the settling calls to SQS (deletes, returns,
	// dead letters): it ends when Run gives up on them (see Run).
	calls context.Context
}

// handle is the consumer's handle of a message it received.
type handle struct {
	receipt  string
	group    string
	id       string
	received time.Time
	body     string                                 // for a dead letter
	attrs    map[string]types.MessageAttributeValue // for a dead letter
}

// counters are the SQS calls' outcomes, besides the leases'.
type counters struct {
	deleteErrors, returnErrors, receiveErrors uint64
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E transport.Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := MessageGroupID(*new(K)); err != nil {
		return nil, fmt.Errorf("sqs: %w", err)
	}
	c := &Consumer[K, E]{cfg: cfg, settleWake: make(chan struct{}, 1), life: transport.NewLifecycle(nil),
		dec: transport.Decoder[K, E]{Codec: cfg.Codec, KeyOf: MessageGroupID[K]}}
	c.in, err = transport.NewKeyIntake[K](transport.KeyConfig[E, *handle]{
		System:      "sqs",
		MaxInFlight: cfg.MaxInFlight,
		EndTimeout:  cfg.DrainTimeout,
		SweepEvery:  cfg.sweepEvery,
		Settle:      c.settle,
		DeadLetter:  c.deadLetter,
		Logger:      cfg.Logger,
		Meter:       cfg.MeterProvider,
		Scope:       meterName,
		Attributes: []meter.Attribute{
			{Key: meter.AttrSystem, Value: "aws_sqs"},
			{Key: meter.AttrDestination, Value: cfg.QueueURL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("sqs: %w", err)
	}
	// A received message is the consumer's only as long as its visibility
	// lasts: the leases extend it while the message is unsettled, and give
	// its group up before the visibility SQS confirmed ends (see
	// transport.Leases), so that SQS cannot give it to another consumer
	// while its handler runs here.
	c.leases, err = transport.NewLeases(transport.LeaseConfig[*handle]{
		System: "sqs", Lease: cfg.VisibilityTimeout, MaxHold: cfg.maxHold, Granularity: time.Second, Batch: 10,
		Extend: c.changeVisibility,
		Lost:   func(h *handle, cause error) { c.in.LeaseLost(h.group, h.id, cause) },
		Lapsed: func(h *handle, cause error) { c.in.LeaseLapsed(h.group, h.id, cause) },
		Name:   func(h *handle) string { return fmt.Sprintf("message %s of group %q", h.id, h.group) },
		Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("sqs: %w", err)
	}
	return c, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a message is deleted when
// every subscriber that accepted it reported a final outcome. Outcomes with
// tag 0 (events published in process), and outcomes of messages whose
// group the consumer gave back, are ignored.
func (c *Consumer[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) { c.in.OnOutcome(key, tag, o) }

// Run receives messages and feeds target until Close is called or ctx
// ends. It first checks the subscribers (transport.CheckSubscriptions) and
// returns an error wrapping runtime.ErrInvalidConfig for subscribers under the
// drop-oldest or drop-newest backlog policy, without OnOutcome, or parking
// differently from one another, and for a queue that is not FIFO. While
// SQS cannot be reached, it tries that check again (warning each time)
// until SQS answers, Close is called or ctx ends.
//
// After Close, Run stops receiving, withdraws the events that had not
// started, waits (up to Config.DrainTimeout, and Close's context) for the
// running ones, deletes what finished, makes the rest visible again and
// returns nil. When ctx ends instead, Run stops at once, as a crash would:
// the running handlers are cancelled and nothing more is sent to SQS (what
// was not deleted comes back when its visibility timeout ends); it returns
// ctx's error. When target fails, Run ends like Close and returns the
// error. Run may be called once.
func (c *Consumer[K, E]) Run(ctx context.Context, target transport.Target[E]) error {
	return c.life.Run(func() error { return c.run(ctx, target) })
}

func (c *Consumer[K, E]) run(ctx context.Context, target transport.Target[E]) error {
	// SQS may not be reachable yet: the check is tried again until SQS
	// answers, Close is called or ctx ends.
	var attrs *sqs.GetQueueAttributesOutput
	stopped, err := transport.Check(ctx, c.life.Closing(), c.cfg.Logger, "queue "+c.cfg.QueueURL, unanswered, func(cctx context.Context) (err error) {
		attrs, err = c.cfg.Client.GetQueueAttributes(cctx, &sqs.GetQueueAttributesInput{
			QueueUrl: &c.cfg.QueueURL, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameFifoQueue},
		})
		return err
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case stopped:
		return nil // Close before the consumer took anything
	case err != nil:
		return fmt.Errorf("sqs: queue %s: %w", c.cfg.QueueURL, err)
	}
	if attrs.Attributes[string(types.QueueAttributeNameFifoQueue)] != "true" {
		return fmt.Errorf("sqs: %w: queue %s is not a FIFO queue: a standard queue does not order", runtime.ErrInvalidConfig, c.cfg.QueueURL)
	}
	// The settling calls run until Run gives up on them: at once when
	// killed, else when Close's context or DrainTimeout after the drain
	// ends, so that a network that stopped answering never holds Run.
	calls, stopCalls := context.WithCancel(context.Background())
	defer stopCalls()
	c.calls = calls
	stopMetrics, err := c.startMetrics()
	if err != nil {
		return fmt.Errorf("sqs: %w: %w", runtime.ErrInvalidConfig, err)
	}
	defer stopMetrics()
	if err := c.in.Start(target); err != nil {
		return fmt.Errorf("sqs: %w", err)
	}
	core := c.in

	rctx, stopReceive := context.WithCancel(context.Background())
	defer stopReceive()
	var receivers, helpers sync.WaitGroup
	for range c.cfg.Receivers {
		receivers.Go(func() { c.receiveLoop(rctx, core) })
	}
	hctx, stopHelpers := context.WithCancel(context.Background())
	defer stopHelpers()
	helpers.Go(func() { c.settleLoop(hctx, calls) })
	helpers.Go(func() { c.leases.Run(hctx) })

	select {
	case <-ctx.Done():
	case <-c.life.Closing():
	case <-core.Failed():
	}
	stopReceive()
	receivers.Wait()

	killed := ctx.Err() != nil
	closeCtx := c.life.CloseContext()
	if killed {
		c.abandon.Store(true) // as a crash: nothing more goes to SQS
		stopCalls()
	}
	dctx, cancel := transport.ShutdownContext("sqs", killed, closeCtx, c.cfg.DrainTimeout)
	left, err := core.Shutdown(dctx)
	cancel()
	if left > 0 || err != nil {
		c.cfg.Logger.Info("ordergen/sqs: messages not finished when the consumer stopped go back to the queue", "queue", c.cfg.QueueURL, "messages", left, "error", err)
	}
	// The settlements still to send get until Close's context or another
	// DrainTimeout ends, whichever is first.
	release := transport.GiveUpAfter(closeCtx, c.cfg.DrainTimeout, stopCalls)
	defer release()
	c.writes.Wait() // their messages were settled by Shutdown; their goroutines end here
	stopHelpers()
	helpers.Wait()
	if !killed {
		c.flushSettlements(calls) // what the last outcomes settled
	}
	switch {
	case core.Err() != nil:
		return core.Err()
	case killed:
		return ctx.Err()
	}
	return nil
}

// Close stops the consumer cleanly: Run stops receiving, withdraws the
// events that had not started, waits for the running ones (up to
// Config.DrainTimeout, and ctx), deletes what finished and makes the rest
// visible again. Close returns Run's result, or ctx's error if Run does not
// return before ctx ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error { return c.life.Close(ctx) }

// unanswered reports whether err is no answer of SQS's (a request that
// failed on its way, or timed out), not SQS's refusal: trying again may
// help.
func unanswered(err error) bool {
	var api smithy.APIError
	return !errors.As(err, &api)
}
