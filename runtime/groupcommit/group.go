package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ordergen/ordergen/runtime/durable"
)

// savepointName is the one savepoint of a group, moved before each key.
const savepointName = "ordergen_group_key"

// How one run of a group's transaction ended (see runOnce).
type runEnd uint8

const (
	// endCommitted: the group committed; every member's Do was answered.
	endCommitted runEnd = iota + 1
	// endRerun: a member failed or was evicted and was answered; the rest
	// run again in a new transaction.
	endRerun
	// endConflict: a conflict with another writer; every member runs again.
	endConflict
	// endFailed: the group cannot commit; every member's Do returns err.
	endFailed
)

// outcome is how a run of a group ended.
type outcome[T any] struct {
	end runEnd
	// left is who was not answered: who runs again after endRerun and
	// endConflict, and whose Do returns err after endFailed.
	left []*request[T]
	// failed says that endRerun follows a failure (not an eviction): the
	// group takes savepoints from then on.
	failed bool
	err    error
}

// runGroup runs members' work in one transaction until it commits, running
// the group again without a key that failed or was evicted, and all of it
// again after a conflict, up to MaxRetries times.
func (g *runner[T]) runGroup(members []*request[T]) {
	c := g.c
	savepoints := c.cfg.Savepoints
	conflicts := 0
	for len(members) > 0 {
		o := g.runOnce(members, savepoints)
		members = o.left
		switch o.end {
		case endCommitted:
			return
		case endRerun:
			savepoints = savepoints || o.failed
		case endConflict:
			conflicts++
			if conflicts > c.cfg.MaxRetries {
				c.cfg.Logger.Warn("groupcommit: group gave up after conflicts", slog.String("committer", c.cfg.Name),
					slog.Int("keys", len(members)), slog.Int("conflicts", conflicts), slog.Any("error", o.err))
				c.finishAll(members, fmt.Errorf("groupcommit: %s: group of %d keys: %d conflicts: %w", c.cfg.Name, len(members), conflicts, o.err))
				return
			}
			c.countRollback(reasonConflict)
			c.cfg.Logger.Info("groupcommit: group rolled back on a conflict", slog.String("committer", c.cfg.Name),
				slog.Int("keys", len(members)), slog.String("reason", reasonConflict), slog.Any("error", o.err))
		case endFailed:
			c.cfg.Logger.Warn("groupcommit: group failed", slog.String("committer", c.cfg.Name),
				slog.Int("keys", len(members)), slog.Any("error", o.err))
			c.finishAll(members, fmt.Errorf("groupcommit: %s: group of %d keys: %w", c.cfg.Name, len(members), o.err))
			return
		}
	}
}

// runOnce runs members' work, one key at a time, in a new transaction and
// commits it, or says why not. kept is the members whose work succeeded in
// this transaction; a member that failed, was evicted or whose context
// ended is answered and left out of what follows.
func (g *runner[T]) runOnce(members []*request[T], savepoints bool) outcome[T] {
	c := g.c
	g.keys = g.keys[:0]
	for _, r := range members {
		g.keys = append(g.keys, r.key)
	}
	gtx, err := c.store.BeginGroup(c.ctx, c.namespace, g.keys)
	if err != nil {
		return g.txError(err, members)
	}
	tx := gtx.Tx()
	kept := make([]*request[T], 0, len(members))
	// from returns who is not answered yet once members[:i] ran.
	from := func(i int) []*request[T] { return append(kept, members[i:]...) }
	for i, r := range members {
		if err := r.ctx.Err(); err != nil {
			// Its attempt ended while it waited for its turn: it wrote
			// nothing, and leaves without running its work.
			c.finish(r, fmt.Errorf("groupcommit: %s %q: waiting for its turn: %w", c.cfg.Name, r.key, err))
			continue
		}
		if savepoints {
			if err := gtx.Savepoint(c.ctx, savepointName); err != nil {
				_ = gtx.Rollback()
				return g.txError(err, from(i))
			}
		}
		key := r.key // r is its Do's again once it is answered or evicted
		r.read = gtx.Read(key)
		rep, ok := g.turn(r, tx)
		switch {
		case !ok:
			_ = gtx.Rollback()
			c.countEviction()
			c.countRollback(reasonEviction)
			c.cfg.Logger.Warn("groupcommit: work evicted from its group", slog.String("committer", c.cfg.Name),
				slog.String("key", key), slog.String("reason", reasonEviction), slog.Duration("max_work", c.cfg.MaxWork),
				slog.Int("keys", len(members)))
			return outcome[T]{end: endRerun, left: from(i + 1)}
		case rep.err == nil && !rep.panicked:
			r.res = rep.res
			kept = append(kept, r)
			continue
		case !rep.panicked && c.store.Retryable(rep.err):
			_ = gtx.Rollback()
			return outcome[T]{end: endConflict, left: from(i), err: rep.err}
		}
		c.counts.failed.Add(1)
		why := rep.err
		if rep.panicked {
			why = errPanicked
		}
		if savepoints {
			c.counts.savepointRollbacks.Add(1)
			c.cfg.Logger.Info("groupcommit: work failed, its savepoint rolled back", slog.String("committer", c.cfg.Name),
				slog.String("key", key), slog.String("reason", reasonFailure), slog.Any("error", why))
			err := gtx.RollbackTo(c.ctx, savepointName)
			c.finishReply(r, rep)
			if err != nil {
				_ = gtx.Rollback()
				return g.txError(err, from(i+1))
			}
			continue
		}
		_ = gtx.Rollback()
		c.countRollback(reasonFailure)
		c.cfg.Logger.Info("groupcommit: work failed, group rolled back", slog.String("committer", c.cfg.Name),
			slog.String("key", key), slog.String("reason", reasonFailure), slog.Any("error", why), slog.Int("keys", len(members)))
		c.finishReply(r, rep)
		return outcome[T]{end: endRerun, left: from(i + 1), failed: true}
	}
	return g.commit(gtx, kept)
}

// errPanicked stands for a work's panic in logs: the panic itself goes up
// the work's own goroutine.
var errPanicked = errors.New("groupcommit: work panicked")

// turn hands r its turn in tx and waits for the work's reply, for at most
// MaxWork. ok is false when the work was evicted: its context is ended with
// ErrEvicted and it is told to run again alone once it returns.
func (g *runner[T]) turn(r *request[T], tx T) (rep reply, ok bool) {
	c := g.c
	ctx, cancel := context.WithCancelCause(r.ctx)
	r.in <- message[T]{kind: msgTurn, ctx: ctx, tx: tx, read: r.read}
	g.timer.Reset(c.cfg.MaxWork)
	select {
	case rep = <-r.out:
		g.timer.Stop()
		cancel(nil)
		return rep, true
	case <-g.timer.C:
		cancel(ErrEvicted)
		r.in <- message[T]{kind: msgAlone}
		return reply{}, false
	}
}

// commit writes the new versions and states of kept, commits, and answers
// their Do calls.
func (g *runner[T]) commit(gtx durable.GroupTx[T], kept []*request[T]) outcome[T] {
	c := g.c
	if len(kept) == 0 {
		_ = gtx.Rollback() // nobody's work is left in it
		return outcome[T]{end: endCommitted}
	}
	var writes []durable.KeyWrite
	events := 0
	for _, r := range kept {
		events += r.events
		if r.res.Write != r.read {
			writes = append(writes, durable.KeyWrite{Key: r.key, KeyState: r.res.Write})
		}
	}
	if err := gtx.Commit(c.ctx, writes); err != nil {
		_ = gtx.Rollback()
		return g.txError(err, kept)
	}
	c.countCommit(len(kept), events)
	for _, r := range kept {
		c.finish(r, r.res.Verdict)
	}
	return outcome[T]{end: endCommitted}
}

// txError is the outcome of an error of the group's transaction, with left
// not answered yet: a conflict when the store says it is one, a failure of
// the group otherwise.
func (g *runner[T]) txError(err error, left []*request[T]) outcome[T] {
	if g.c.store.Retryable(err) {
		return outcome[T]{end: endConflict, left: left, err: err}
	}
	return outcome[T]{end: endFailed, left: left, err: err}
}

// finish answers r's Do with err.
func (c *Committer[T]) finish(r *request[T], err error) {
	r.in <- message[T]{kind: msgDone, err: err}
}

// finishReply answers r's Do with the error of its work, or not at all
// after a panic: its worker is gone up its stack.
func (c *Committer[T]) finishReply(r *request[T], rep reply) {
	if !rep.panicked {
		c.finish(r, rep.err)
	}
}

// finishAll answers the Do calls of rs with err.
func (c *Committer[T]) finishAll(rs []*request[T], err error) {
	for _, r := range rs {
		c.finish(r, err)
	}
}
