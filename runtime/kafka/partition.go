package kafka

import (
	"context"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transport/offsets"
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
// ownership of it, a stream of the intake. Its fields are guarded by the
// consumer's mu.
type partition[K comparable, E any] struct {
	tp
	stream        *transport.Stream[K, E, record[K, E]]
	state         partState
	trk           offsets.Tracker
	pause         PauseReason // why fetching is paused; notPaused when it is not
	highWatermark int64       // from the last fetch; -1 before one
	attrs         meter.AttributeSet

	lastOffset int64 // the last commit acknowledged
	lastMeta   string
	committed  bool
}

// hooks are p's stream's: fetching p pauses while its records wait, and
// the feeder is woken to retry them.
func (c *Consumer[K, E]) hooks(p *partition[K, E]) transport.StreamHooks {
	return transport.StreamHooks{
		Pause: func(held bool) {
			why := PausedBacklog
			if held {
				why = PausedMetadata
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if p.state == active {
				c.pauseFetch(p, why)
			}
		},
		Resume: func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if p.state == active {
				c.resumeFetch(p)
			}
		},
		Wake: func() {
			c.mu.Lock()
			c.signal()
			c.mu.Unlock()
		},
	}
}

// pauseFetch pauses fetching p, or records why it stays paused. c.mu is
// held.
func (c *Consumer[K, E]) pauseFetch(p *partition[K, E], why PauseReason) {
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
		n, oldest := p.trk.Unfinished()
		c.cfg.Logger.Log(context.Background(), level, msg, "topic", p.topic, "partition", p.partition,
			"reason", why.String(), "unfinished", n, "committed", p.lastOffset, "oldest_unfinished_age", ageOf(oldest))
	}
	p.pause = why
}

// resumeFetch resumes fetching p. c.mu is held.
func (c *Consumer[K, E]) resumeFetch(p *partition[K, E]) {
	if p.pause == notPaused {
		return
	}
	level := slog.LevelDebug
	if p.pause == PausedMetadata {
		level = slog.LevelInfo
	}
	c.cfg.Logger.Log(context.Background(), level, "ordergen/kafka: partition resumed", "topic", p.topic, "partition", p.partition, "was", p.pause.String())
	p.pause = notPaused
	c.client().ResumeFetchPartitions(map[string][]int32{p.topic: {p.partition}})
}

// ageOf returns the time since at (unix nanoseconds), zero for zero.
func ageOf(at int64) time.Duration {
	if at == 0 {
		return 0
	}
	return time.Duration(now() - at)
}
