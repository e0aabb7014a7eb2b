package kafka

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
)

// partState is where an assigned partition is in its life.
type partState uint8

const (
	active   partState = iota // records are taken
	revoking                  // its ownership is ending: no more records
	gone                      // revoked or lost: outcomes are ignored
)

// PauseReason says why the consumer paused fetching a partition.
type PauseReason uint8

const (
	notPaused PauseReason = iota
	// PausedBacklog: the lanes refused a record for lack of room (a
	// subscriber's backlog is full). It resumes as soon as records finish.
	PausedBacklog
	// PausedMetadata: taking the next record could let the partition's
	// commit metadata pass Config.MaxMetadataBytes, because too many
	// records above its lowest unfinished one are unfinished. With parks in
	// memory these are usually parked records: it resumes when their parks
	// are resolved (Replay or Discard) or the records otherwise finish.
	PausedMetadata
)

var pauseNames = [...]string{notPaused: "", PausedBacklog: "backlog", PausedMetadata: "metadata"}

// String returns the reason's name, as in logs and metrics ("backlog",
// "metadata"; "" when not paused).
func (r PauseReason) String() string {
	if int(r) < len(pauseNames) {
		return pauseNames[r]
	}
	return "PauseReason(?)"
}

// partition is the consumer's state of one assigned partition: one
// ownership of it.
type partition[K comparable, E any] struct {
	tp
	own           *transport.Ownership
	state         partState
	trk           tracker
	stash         []*pending[E] // records waiting for room, in offset order
	blocked       bool          // records wait in the stash (or are being retried)
	pause         PauseReason   // why fetching is paused; notPaused when it is not
	highWatermark int64         // from the last fetch; -1 before one
	attrs         meter.AttributeSet
	deadLetters   int           // dead-letter writes in flight
	written       chan struct{} // closed when deadLetters drops to 0, for a waiter

	lastOffset int64 // the last commit acknowledged
	lastMeta   string
	committed  bool
}

// pending is a record taken, or about to be.
type pending[E any] struct {
	rec    *kgo.Record
	event  E
	reason Reason // a bad record when not ""
	err    error
	tag    uint64 // its slot in the source, once taken
}

// block keeps rest in p's stash and pauses fetching p. c.mu is held.
func (c *Consumer[K, E]) block(p *partition[K, E], rest []*pending[E], why PauseReason) {
	if !p.blocked {
		p.blocked = true
		c.blocked++
	}
	p.stash = slices.Clone(rest)
	if p.pause == notPaused {
		c.stats.Pauses++
		c.client().PauseFetchPartitions(map[string][]int32{p.topic: {p.partition}})
		level, msg := slog.LevelDebug, "ordergen/kafka: partition paused: the lanes are full; it resumes when records finish"
		if why == PausedMetadata {
			// It waits for records to finish, perhaps parked ones only an
			// operator resolves.
			level = slog.LevelWarn
			msg = "ordergen/kafka: partition paused: its commit metadata could pass MaxMetadataBytes; it resumes when its unfinished records finish (replay or discard the parked keys, see the dispatcher's ParkedKeys)"
		}
		n, oldest := p.trk.unfinished()
		c.cfg.Logger.Log(context.Background(), level, msg, "topic", p.topic, "partition", p.partition,
			"reason", why.String(), "unfinished", n, "committed", p.lastOffset, "oldest_unfinished_age", ageOf(oldest))
	}
	p.pause = why
}

// unblock resumes fetching p once its stash is empty. c.mu is held.
func (c *Consumer[K, E]) unblock(p *partition[K, E]) {
	if len(p.stash) > 0 {
		return
	}
	if p.blocked {
		p.blocked = false
		c.blocked--
	}
	if p.pause != notPaused {
		level := slog.LevelDebug
		if p.pause == PausedMetadata {
			level = slog.LevelInfo
		}
		c.cfg.Logger.Log(context.Background(), level, "ordergen/kafka: partition resumed", "topic", p.topic, "partition", p.partition, "was", p.pause.String())
		p.pause = notPaused
		c.client().ResumeFetchPartitions(map[string][]int32{p.topic: {p.partition}})
	}
}

// ageOf returns the time since at (unix nanoseconds), zero for zero.
func ageOf(at int64) time.Duration {
	if at == 0 {
		return 0
	}
	return time.Duration(now() - at)
}
