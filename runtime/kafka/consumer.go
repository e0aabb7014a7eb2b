package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
)

// ErrRunning is returned by Run when the consumer already ran.
var ErrRunning = errors.New("kafka: consumer already ran")

// Consumer consumes the records of one entity in a consumer group and feeds
// them to per-key lanes (a Target), committing each partition only up to
// its lowest unfinished offset, with the finished offsets above it in the
// commit metadata. See the package documentation for the whole protocol.
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E Keyed[K]] struct {
	cfg    Config[E]
	nowait context.Context // done: submissions never block

	mu         sync.Mutex
	parts      map[tp]*partition[K, E]
	slots      slots[K, E]
	inflight   int
	blocked    int // partitions with a stash
	pollCancel context.CancelFunc
	stats      Stats
	topicIDs   map[string][16]byte

	cl       atomic.Pointer[kgo.Client] // set by Run
	wake     chan struct{}              // outcomes that may unblock the feeder
	commitMu sync.Mutex                 // one commit at a time, in order

	started   atomic.Bool
	abandon   atomic.Bool // callbacks commit nothing: the consumer stops abruptly
	leaving   atomic.Bool // callbacks commit nothing: Run already drained and committed
	closeOnce sync.Once
	closeCh   chan struct{}
	closeCtx  context.Context
	done      chan struct{}
	runErr    error
}

// tp names a partition.
type tp struct {
	topic     string
	partition int32
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var zero K
	if _, err := runtime.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	nowait, cancel := context.WithCancel(context.Background())
	cancel()
	return &Consumer[K, E]{
		cfg:     cfg,
		nowait:  nowait,
		parts:   make(map[tp]*partition[K, E]),
		wake:    make(chan struct{}, 1),
		closeCh: make(chan struct{}),
		done:    make(chan struct{}),
	}, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a record is finished when
// every subscriber that holds it reported. Outcomes with tag 0 (events
// published in process) or of records the consumer let go of (a replay of
// a parked record, see Parked keys in the package documentation) are
// ignored.
func (c *Consumer[K, E]) OnOutcome(_ K, tag uint64, o runtime.Outcome) {
	if tag == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.slots.get(tag)
	if s == nil {
		return
	}
	if o == runtime.Parked && !c.cfg.CommitParked {
		s.stuck = true
	}
	s.remaining--
	if s.remaining == 0 {
		c.release(tag, s)
	}
}

// release ends slot s: its offset is finished unless it was parked or
// abandoned. c.mu is held.
func (c *Consumer[K, E]) release(tag uint64, s *slot[K, E]) {
	p := s.part
	switch {
	case s.stuck:
		p.stuck++
		c.stats.Stuck++
	case s.abandoned:
	default:
		if p.state != gone {
			p.trk.finish(s.offset)
		}
		c.stats.Finished++
	}
	p.inflight--
	if p.inflight == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
	full := c.inflight >= c.cfg.MaxInFlight
	c.inflight--
	c.slots.release(tag)
	if full || c.blocked > 0 {
		c.signal()
	}
}

// signal wakes the feeder: it stops polling to retry the blocked
// partitions, or polls again after waiting for room. c.mu is held, so
// that a feeder about to poll sees either the signal or its cancel.
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
// Every subscriber of target must report outcomes to OnOutcome.
//
// After Close, Run stops taking records, waits (up to Config.RevokeTimeout,
// and Close's context) for the records in flight, commits, leaves the
// group and returns nil. When ctx ends instead, Run stops at once, as a
// crash would: it commits nothing more, leaves the group and returns ctx's
// error; the next owner runs again what was not committed. When target
// fails (it is closed), Run commits what is finished, leaves and returns
// the error. Run may be called once.
func (c *Consumer[K, E]) Run(ctx context.Context, target Target[E]) error {
	if !c.started.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer close(c.done)
	c.runErr = c.run(ctx, target)
	return c.runErr
}

func (c *Consumer[K, E]) run(ctx context.Context, target Target[E]) error {
	opts := append(append([]kgo.Opt(nil), c.cfg.ClientOpts...),
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

	err = c.feed(ctx, target)
	stopCommits()
	wg.Wait()
	switch {
	case ctx.Err() != nil:
		c.abandon.Store(true)
		err = ctx.Err()
	case err == nil: // Close
		ps := c.detach(c.assigned())
		dctx, cancel := context.WithTimeout(c.closeCtx, c.cfg.RevokeTimeout)
		c.drain(dctx, ps)
		cancel()
		if cerr := c.commit(c.closeCtx, cl, ps); cerr != nil {
			c.cfg.Logger.Warn("ordergen/kafka: final commit failed", "group", c.cfg.Group, "error", cerr)
		}
		c.leaving.Store(true)
	default: // the target failed: keep what is finished
		if cerr := c.commit(context.Background(), cl, c.all()); cerr != nil {
			c.cfg.Logger.Warn("ordergen/kafka: final commit failed", "group", c.cfg.Group, "error", cerr)
		}
		c.leaving.Store(true)
	}
	cl.Close()
	return err
}

// Close stops the consumer cleanly: Run stops taking records, waits for
// the records in flight (up to Config.RevokeTimeout, and ctx), commits and
// leaves the group. Close returns Run's result, or ctx's error if Run does
// not return before ctx ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.closeCtx = ctx
		c.mu.Lock()
		close(c.closeCh)
		c.signal()
		c.mu.Unlock()
	})
	if !c.started.Load() {
		return nil
	}
	select {
	case <-c.done:
		return c.runErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

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

// assigned returns the partitions the consumer holds, by topic.
func (c *Consumer[K, E]) assigned() map[string][]int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string][]int32)
	for t := range c.parts {
		m[t.topic] = append(m[t.topic], t.partition)
	}
	return m
}

// client returns the client Run created.
func (c *Consumer[K, E]) client() *kgo.Client { return c.cl.Load() }
