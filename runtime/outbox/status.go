package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// Stats are a relay's counters and the outbox's backlog as last read.
type Stats struct {
	// Sent is how many events this relay marked sent.
	Sent uint64
	// Retries is how many failed sends this relay left for a retry.
	Retries uint64
	// Parked is how many keys this relay parked.
	Parked uint64
	// Pruned is how many sent events this relay deleted past Retention.
	Pruned uint64
	// Rounds is how many rounds this relay began.
	Rounds uint64

	// The outbox as last read (every relay's work), at ReadAt.

	// Backlog is the number of unsent events.
	Backlog int
	// OldestAge is the age of the first unsent event (in insertion order),
	// at ReadAt; zero when none.
	OldestAge time.Duration
	// ParkedKeys is the number of parked keys.
	ParkedKeys int
	// RetryingKeys is the number of keys waiting to retry a failed send.
	RetryingKeys int
	// ReadAt is when the backlog was read; zero before the first read.
	ReadAt time.Time
}

// Stats returns the relay's counters and the outbox's backlog as last read
// (see Config.StatsEvery).
func (r *Relay[K, E]) Stats() Stats {
	s := Stats{
		Sent: r.sent.Load(), Retries: r.retries.Load(), Parked: r.parked.Load(),
		Pruned: r.pruned.Load(), Rounds: r.rounds.Load(),
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.backlog
	s.Backlog, s.ParkedKeys, s.RetryingKeys, s.ReadAt = b.Unsent, b.Parked, b.Retrying, r.readAt
	if !b.Oldest.IsZero() {
		s.OldestAge = max(r.readAt.Sub(b.Oldest), 0)
	}
	return s
}

// Refresh reads the outbox's backlog now, for Stats, the metrics and
// TransportStatus (Run does it every Config.StatsEvery).
func (r *Relay[K, E]) Refresh(ctx context.Context) error {
	b, err := r.cfg.Store.OutboxBacklog(ctx, r.cfg.Entity)
	if err != nil {
		return err
	}
	keys, err := r.cfg.Store.OutboxKeys(ctx, r.cfg.Entity, shownKeys)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.backlog, r.stopped, r.readAt = b, keys, time.Now()
	return nil
}

// shownKeys is how many of the keys that do not flow TransportStatus shows.
const shownKeys = 20

// Prune deletes the events sent longer than Config.Retention ago (Run does
// it regularly) and returns how many it deleted.
func (r *Relay[K, E]) Prune(ctx context.Context) (int, error) {
	before := time.Now().Add(-max(r.cfg.Retention, 0))
	total := 0
	for range prunePages {
		n, err := r.cfg.Store.PruneOutbox(ctx, r.cfg.Entity, before, prunePage)
		total += n
		r.pruned.Add(uint64(n))
		if err != nil || n < prunePage {
			return total, err
		}
	}
	return total, nil
}

// Sent events are deleted prunePage at a time, at most prunePages pages
// between two rounds.
const (
	prunePage  = 5000
	prunePages = 10
)

// housekeeping is when Run last refreshed the backlog and pruned.
type housekeeping struct {
	refreshed, pruned time.Time
}

// pruneEvery is how often Run prunes.
func (r *Relay[K, E]) pruneEvery() time.Duration {
	return min(max(r.cfg.Retention/4, time.Second), time.Minute)
}

// housekeep refreshes and prunes when they are due.
func (r *Relay[K, E]) housekeep(ctx context.Context, h *housekeeping) {
	now := time.Now()
	if now.Sub(h.refreshed) >= r.cfg.StatsEvery {
		h.refreshed = now
		if err := r.Refresh(ctx); err != nil && ctx.Err() == nil {
			r.log.error("ordergen: outbox relay cannot read the backlog", "entity", r.cfg.Entity, "error", err)
		}
	}
	if now.Sub(h.pruned) >= r.pruneEvery() {
		h.pruned = now
		if _, err := r.Prune(ctx); err != nil && ctx.Err() == nil {
			r.log.error("ordergen: outbox relay cannot prune", "entity", r.cfg.Entity, "error", err)
		}
	}
}

// untilHousekeeping is how long until housekeeping is due.
func (r *Relay[K, E]) untilHousekeeping(h *housekeeping) time.Duration {
	now := time.Now()
	return min(h.refreshed.Add(r.cfg.StatsEvery).Sub(now), h.pruned.Add(r.pruneEvery()).Sub(now))
}

// TransportStatus implements inspect.Transport, for the operator's console:
// the relay's counters, the backlog, and the first keys that do not flow
// (parked or retrying), each with its reason, as last read; each names its
// entity and key, for RetryKey and DiscardKey.
func (r *Relay[K, E]) TransportStatus() inspect.TransportStatus {
	s := r.Stats()
	st := inspect.TransportStatus{
		Kind: "outbox",
		Name: "outbox of " + r.cfg.Entity,
		Counters: []inspect.Counter{
			{Name: "unsent events", Value: int64(s.Backlog)},
			{Name: "oldest unsent (ms)", Value: s.OldestAge.Milliseconds()},
			{Name: "parked keys", Value: int64(s.ParkedKeys)},
			{Name: "retrying keys", Value: int64(s.RetryingKeys)},
			{Name: "sent", Value: int64(s.Sent)},
			{Name: "retries", Value: int64(s.Retries)},
			{Name: "parked by this relay", Value: int64(s.Parked)},
			{Name: "pruned", Value: int64(s.Pruned)},
		},
	}
	r.mu.Lock()
	keys := r.stopped
	r.mu.Unlock()
	for _, k := range keys {
		p := inspect.Partition{Name: "key " + k.Key, Lag: int64(k.Unsent), Unfinished: k.Unsent, Paused: "retrying", Detail: k.Reason,
			Entity: r.cfg.Entity, Key: k.Key}
		if !k.Oldest.IsZero() {
			p.OldestUnfinished = time.Since(k.Oldest)
		}
		if !k.Parked.IsZero() {
			p.Paused, p.Parked = "parked", k.Unsent
			p.Detail = fmt.Sprintf("parked %s: %s", k.Parked.UTC().Format(time.RFC3339), k.Reason)
		}
		st.Partitions = append(st.Partitions, p)
	}
	return st
}

var _ inspect.Transport = (*Relay[string, any])(nil)

// logLimiter logs a message at most once a second, with how many were left
// out since.
type logLimiter struct {
	logger *slog.Logger

	// mu guards the fields below.
	mu      sync.Mutex
	last    map[string]time.Time
	skipped map[string]int
}

func (l *logLimiter) warn(msg string, args ...any)  { l.emit(slog.LevelWarn, msg, args) }
func (l *logLimiter) error(msg string, args ...any) { l.emit(slog.LevelError, msg, args) }

func (l *logLimiter) emit(level slog.Level, msg string, args []any) {
	l.mu.Lock()
	if l.last == nil {
		l.last, l.skipped = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	if now.Sub(l.last[msg]) < time.Second {
		l.skipped[msg]++
		l.mu.Unlock()
		return
	}
	l.last[msg] = now
	if n := l.skipped[msg]; n > 0 {
		args = append(args, "similar_left_out", n)
	}
	l.skipped[msg] = 0
	l.mu.Unlock()
	l.logger.Log(context.Background(), level, msg, args...)
}
