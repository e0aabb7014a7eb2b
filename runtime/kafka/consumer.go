package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Consumer consumes the records of one entity in a consumer group and feeds
// them to per-key lanes (a transport.Target), committing each partition
// only up to its lowest unfinished offset, with the finished offsets above
// it in the commit metadata. Each partition it owns is a stream of a
// transport.StreamIntake. See the package documentation for the protocol.
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E transport.Keyed[K]] struct {
	cfg   Config[E]
	dec   transport.Decoder[K, E]
	in    *transport.StreamIntake[K, E, record[K, E]]
	life  *transport.Lifecycle
	watch transport.BlockWatch

	// mu guards what follows and the partitions' fields; it is taken after
	// the intake's locks (the intake's Settle and hooks take it), never
	// before.
	mu         sync.Mutex
	parts      map[tp]*partition[K, E]
	takenAt    int64 // when the records being taken were polled (unix nanoseconds)
	pollCancel context.CancelFunc
	stats      Stats
	consumed   map[string]uint64 // records polled, by topic
	topicIDs   map[string][16]byte

	cl       atomic.Pointer[kgo.Client] // set by Run
	wake     chan struct{}              // settlements that may let a paused partition go on
	commitMu sync.Mutex                 // one commit at a time, in order
	metrics  *metrics

	// msgs is the feeder's buffer of the messages it decodes a poll into
	// (decodeAll), cleared once the streams took them.
	msgs []transport.Message[E, record[K, E]]

	abandon atomic.Bool // callbacks commit nothing: the consumer stops abruptly
	leaving atomic.Bool // callbacks commit nothing: Run already ended and committed
	// stopClient ends the client's context (see leave); set by Run before
	// it makes the client.
	stopClient context.CancelFunc
}

// tp names a partition.
type tp struct {
	topic     string
	partition int32
}

// record is the consumer's handle of a record it took: its partition (the
// ownership it was taken under) and its offset.
type record[K comparable, E any] struct {
	p      *partition[K, E]
	offset int64
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E transport.Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := transport.KeyText(*new(K)); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	c := &Consumer[K, E]{
		cfg:      cfg,
		dec:      transport.Decoder[K, E]{Codec: cfg.Codec, Keyless: cfg.AcceptKeyless},
		parts:    make(map[tp]*partition[K, E]),
		consumed: make(map[string]uint64),
		wake:     make(chan struct{}, 1),
		watch: transport.BlockWatch{Logger: cfg.Logger, Prefix: "ordergen/kafka: ", What: "the consumer", Room: "MaxInFlight",
			Attrs: []any{"group", cfg.Group}},
	}
	c.in, err = transport.NewStreamIntake[K](transport.StreamConfig[E, record[K, E]]{
		System: "kafka", Settle: c.settled, DeadLetter: c.deadLetter, Admit: c.admit, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	c.life = transport.NewLifecycle(func() {
		c.mu.Lock()
		c.signal()
		c.mu.Unlock()
	})
	if err := c.startMetrics(); err != nil {
		return nil, err
	}
	return c, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a record is finished when
// every subscriber that accepted it reported a final outcome. Outcomes with
// tag 0 (events published in process), and outcomes of records whose
// partition the consumer no longer owns, are ignored.
func (c *Consumer[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) { c.in.OnOutcome(key, tag, o) }

// admit decides whether the feeder takes the record at r: not one of a
// partition whose ownership ends, nor one taken before (a fetch again
// after a pause), nor one the previous owner listed as finished; and not
// yet one that could let the partition's commit metadata pass its bound.
func (c *Consumer[K, E]) admit(r record[K, E]) transport.Admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, o := r.p, r.offset
	switch {
	case p.state != active, p.trk.Seen(o):
		return transport.AdmitSkip
	case p.trk.InheritedDone(o):
		p.trk.Skip(o)
		c.stats.SkippedFinished++
		return transport.AdmitSkip
	case !p.trk.Fits(o, c.cfg.MaxMetadataBytes):
		return transport.AdmitHold
	}
	p.trk.Add(o, c.takenAt)
	return transport.AdmitTake
}

// settled is the intake's verdict on a record: finished, the commit may
// pass it; unfinished, it runs again on the next owner.
func (c *Consumer[K, E]) settled(r record[K, E], st transport.Settlement) {
	if st != transport.Finished {
		return
	}
	c.mu.Lock()
	if r.p.state != gone {
		r.p.trk.Finish(r.offset)
	}
	c.mu.Unlock()
}

// signal wakes the feeder: it stops polling to retry the paused
// partitions. c.mu is held, so that a feeder about to poll sees either
// the signal or its cancel.
func (c *Consumer[K, E]) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
	if c.pollCancel != nil {
		c.pollCancel()
	}
}

// Run joins the group and feeds target until Close is called or ctx ends.
// Every subscriber of target must report outcomes to OnOutcome. Run first
// checks the subscribers (transport.CheckSubscriptions) and returns an error
// wrapping runtime.ErrInvalidConfig, before it connects, for subscribers
// under the drop-oldest or drop-newest backlog policy (a dropped event
// would let the commit pass a record no handler ran), without OnOutcome, or
// parking differently from one another. A subscriber added while Run runs
// is checked when it first accepts a record: Run then ends, as when target
// fails, with that error.
//
// After Close, Run stops taking records, withdraws those that had not
// started, waits (up to Config.RevokeTimeout, and Close's context) for the
// running ones, commits, leaves the group (trying no longer than Close's
// context and RevokeTimeout allow) and returns nil. When ctx ends instead,
// Run stops at once, as a crash would: it withdraws the records that had
// not started, cancels the running ones, commits nothing more, tries for a
// second to leave the group and returns ctx's error; the next owner runs
// again what was not committed. When target fails (it is closed), Run
// ends like Close and returns the error. Run may be called once; a second
// call returns transport.ErrRunning.
func (c *Consumer[K, E]) Run(ctx context.Context, target transport.Target[E]) error {
	return c.life.Run(func() error {
		if c.metrics != nil {
			defer c.metrics.stop()
		}
		return c.run(ctx, target)
	})
}

func (c *Consumer[K, E]) run(ctx context.Context, target transport.Target[E]) error {
	if err := c.in.Start(target); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	clientCtx, stopClient := context.WithCancel(context.Background())
	defer stopClient()
	c.stopClient = stopClient
	opts := append(append([]kgo.Opt(nil), c.cfg.ClientOpts...),
		kgo.WithContext(clientCtx), // ended when Run gives up on the broker (leave)
		kgo.ConsumerGroup(c.cfg.Group),
		kgo.ConsumeTopics(c.cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.OnOffsetsFetched(c.onFetched),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka: consumer client: %w", err)
	}
	c.cl.Store(cl)

	cctx, stopCommits := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.commitLoop(cctx) })

	err = c.feed(ctx)
	stopCommits()
	wg.Wait()
	if ctx.Err() != nil {
		// As a crash: nothing more is committed, but the partitions' events
		// still in the lanes must not run while the next owner runs them.
		c.abandon.Store(true)
		c.release(transport.Stopped("kafka", errors.New("Run's context ended")), nil, cl, c.all(), "stopped")
		lctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
		c.leave(lctx, cl)
		cancel()
		return ctx.Err()
	}
	closeCtx := c.life.CloseContext()
	if closeCtx == nil { // the target failed
		closeCtx = context.Background()
	}
	dctx, cancel := transport.ShutdownContext("kafka", false, closeCtx, c.cfg.RevokeTimeout)
	c.release(dctx, closeCtx, cl, c.all(), "closed")
	cancel()
	c.leaving.Store(true)
	lctx, cancel := context.WithTimeout(closeCtx, c.cfg.RevokeTimeout)
	c.leave(lctx, cl)
	cancel()
	return err
}

// leaveTimeout bounds how long a consumer whose Run's context ended tries
// to leave its group, so that the others take its partitions without
// waiting for its session to time out; a broker that does not answer
// costs no more than that.
const leaveTimeout = time.Second

// leave leaves the group and closes the client, trying no longer than ctx
// lasts. franz-go's Close waits for the leave however long the broker
// takes to answer (minutes when the network stopped answering) unless the
// client's own context ends: the consumer gives the client a context of
// its own (kgo.WithContext) and ends it then. A leave cut short is one the
// broker may not have seen: the partitions move when the member's session
// times out.
func (c *Consumer[K, E]) leave(ctx context.Context, cl *kgo.Client) {
	stop := context.AfterFunc(ctx, c.stopClient)
	defer stop()
	cl.Close()
	if ctx.Err() != nil {
		c.cfg.Logger.Warn("ordergen/kafka: the consumer gave up leaving the group; its partitions move to the other members when its session times out",
			"group", c.cfg.Group, "error", ctx.Err())
	}
}

// Close stops the consumer cleanly: Run stops taking records, withdraws
// those that had not started, waits for the running ones (up to
// Config.RevokeTimeout, and ctx), commits and leaves the group. Close
// returns Run's result, or ctx's error if Run does not return before ctx
// ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error { return c.life.Close(ctx) }

// all returns the partitions the consumer holds.
func (c *Consumer[K, E]) all() []*partition[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*partition[K, E], 0, len(c.parts))
	for _, p := range c.parts {
		out = append(out, p)
	}
	return out
}

// client returns the client Run created.
func (c *Consumer[K, E]) client() *kgo.Client { return c.cl.Load() }

// now is the time records are stamped with when taken.
func now() int64 { return time.Now().UnixNano() }
