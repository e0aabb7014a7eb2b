package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/transport"
)

// A round: claim up to Batch events of keys no other relay holds (the
// claim holds them until it ends), send each key's events in version order
// (Senders keys at once), then mark what was sent and record each key's
// failure in the claim's transaction and commit. The sink never sees a
// key's event before the one before it was taken, and a key's events are
// marked in the transaction that held the key while they were sent: so
// after a crash the next relay starts each key at its first event not
// marked, and only events a crashed round had sent are sent again.

// roundResult is what a round did.
type roundResult struct {
	sent, failed int // events marked sent; keys whose send failed
	busy         int // keys left out because other relays hold them
}

// progress reports whether the round moved anything: another round may
// find more at once.
func (res roundResult) progress() bool { return res.sent > 0 || res.failed > 0 }

// keyOutcome is what sending one key of a claim came to.
type keyOutcome struct {
	result sqlstore.OutboxResult
	err    error // the failure, nil when every event was sent
	// stopped: the failure is the round's context ending (a crash or
	// Close), not the sink's: it is not counted against the key.
	stopped bool
}

// RunOnce runs one round, as Run does between its waits, and returns how
// many events it marked sent. When ctx ends during the round, it stops as
// a crash would (nothing of the round is marked) and returns ctx's error.
// It is for tests and for services that drive the relay themselves; it
// may run beside Run and other RunOnce calls.
func (r *Relay[K, E]) RunOnce(ctx context.Context) (int, error) {
	res, err := r.round(ctx)
	return res.sent, err
}

// round runs one round with ctx for its sends.
func (r *Relay[K, E]) round(ctx context.Context) (roundResult, error) {
	id := r.rounds.Add(1)
	claim, err := r.cfg.Store.ClaimOutbox(ctx, r.cfg.Entity, r.cfg.Batch)
	if err != nil {
		if ctx.Err() != nil {
			return roundResult{}, ctx.Err()
		}
		return roundResult{}, err
	}
	res := roundResult{busy: claim.Busy}
	if len(claim.Keys) == 0 {
		return res, nil
	}
	if r.hooks.claimed != nil {
		r.hooks.claimed(id)
	}
	hold, stopChecks := r.holdOf(ctx, claim)
	outcomes := r.sendAll(withRound(ctx, id), hold, claim.Keys)
	stopChecks()

	// The marks go in whatever became of ctx, bounded on their own: a
	// crashed round's sends have all returned by now, so no relay can
	// ship these keys while this one still sends them.
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if ctx.Err() != nil && !r.isAborted() {
		// A crash: mark nothing, as a dead process would.
		err := claim.Rollback()
		r.ended(id, false)
		return res, errors.Join(ctx.Err(), err)
	}
	results := make([]sqlstore.OutboxResult, len(outcomes))
	for i, o := range outcomes {
		results[i] = o.result
		if o.stopped { // Close cut the round short: keep the key as it was
			results[i] = sqlstore.OutboxResult{Sent: o.result.Sent, Attempts: claim.Keys[i].Attempts}
			if o.result.Sent == len(claim.Keys[i].Events) {
				results[i].Attempts = 0
			}
		}
	}
	if err := claim.Commit(markCtx, results); err != nil {
		r.ended(id, false)
		if lost := hold.lost(); lost != nil {
			// The usual way a claim is lost: its session ended, and the
			// marks went with it.
			return res, fmt.Errorf("outbox relay of %s: the round stopped sending when it lost its claim, and marked nothing: %w", r.cfg.Entity, errors.Join(lost, err))
		}
		return res, err
	}
	defer r.ended(id, true) // once counted
	for i, o := range outcomes {
		res.sent += o.result.Sent
		if o.err == nil || o.stopped {
			continue
		}
		res.failed++
		k := claim.Keys[i]
		failed := k.Events[o.result.Sent]
		if o.result.Park {
			r.parked.Add(1)
			r.cfg.Logger.Warn("ordergen: outbox key parked; retry or discard it with ordergen-parked outbox",
				"entity", r.cfg.Entity, "key", k.Key, "version", failed.Version, "attempts", o.result.Attempts, "reason", o.result.Reason)
			continue
		}
		r.retries.Add(1)
		r.retryAt(o.result.RetryAt)
		r.log.warn("ordergen: outbox send failed; the key retries", "entity", r.cfg.Entity, "key", k.Key,
			"version", failed.Version, "attempts", o.result.Attempts, "retry_in", time.Until(o.result.RetryAt).Round(time.Millisecond), "error", o.err)
	}
	r.sent.Add(uint64(res.sent))
	return res, nil
}

// markTimeout bounds the statements of a round after its claim: each
// check of the claim, and those that mark its events sent.
const markTimeout = 30 * time.Second

// holdOf returns the checks of claim for the sends of a round run with
// ctx, and the function that ends them. A check runs in whatever became of
// ctx, as the marks do, unless ctx ended by a crash: on PostgreSQL a
// statement cut short ends its session, and with it the claim, which a
// round cut short by Close still commits.
func (r *Relay[K, E]) holdOf(ctx context.Context, claim *sqlstore.OutboxClaim) (*holdCheck, func()) {
	checkCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !r.isAborted() { // Close sets aborted before it ends ctx
			cancel()
		}
	})
	hold := newHoldCheck(func() error {
		ctx, cancel := context.WithTimeout(checkCtx, markTimeout)
		defer cancel()
		return claim.Held(ctx)
	})
	return hold, func() {
		stop()
		cancel()
	}
}

func (r *Relay[K, E]) ended(id uint64, committed bool) {
	if r.hooks.ended != nil {
		r.hooks.ended(id, committed)
	}
}

// sendAll sends the keys of a claim, up to Senders at once, and returns
// what became of each.
func (r *Relay[K, E]) sendAll(ctx context.Context, hold *holdCheck, keys []sqlstore.OutboxClaimKey) []keyOutcome {
	out := make([]keyOutcome, len(keys))
	workers := min(r.cfg.Senders, len(keys))
	if workers == 1 {
		for i := range keys {
			out[i] = r.sendKey(ctx, hold, keys[i])
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(keys) {
					return
				}
				out[i] = r.sendKey(ctx, hold, keys[i])
			}
		})
	}
	wg.Wait()
	return out
}

// sendKey sends one key's events in version order, each once the one
// before was taken and the claim confirmed, and stops at the first that
// fails or when the claim is lost.
func (r *Relay[K, E]) sendKey(ctx context.Context, hold *holdCheck, k sqlstore.OutboxClaimKey) keyOutcome {
	key, err := durable.DecodeKey[K](k.Key)
	if err != nil {
		return r.failed(ctx, k, 0, runtime.Permanent(fmt.Errorf("undecodable key: %w", err)))
	}
	if k.Attempts > 0 && r.resumer != nil {
		r.resumer.Resume(key) // the key failed before: its sink may still hold that against it
	}
	for i, ev := range k.Events {
		if ctx.Err() != nil {
			return r.failed(ctx, k, i, ctx.Err())
		}
		e, err := r.cfg.Codec.Decode(ev.Event.Name, ev.Event.Data)
		if err != nil {
			return r.failed(ctx, k, i, runtime.Permanent(fmt.Errorf("undecodable %s event of version %d: %w", ev.Event.Name, ev.Version, err)))
		}
		if o, lost := r.confirm(ctx, hold, k, i); lost {
			return o
		}
		err = r.send(traced(ctx, ev), key, e)
		if errors.Is(err, transport.ErrKeyPaused) && r.resumer != nil {
			// A failure of this key before (in this round's process) paused
			// it in the sink; the relay deals with it by sending from the
			// first event not marked, which it does now.
			r.resumer.Resume(key)
			if o, lost := r.confirm(ctx, hold, k, i); lost {
				return o
			}
			err = r.send(traced(ctx, ev), key, e)
		}
		if err != nil {
			return r.failed(ctx, k, i, err)
		}
	}
	return keyOutcome{result: sqlstore.OutboxResult{Sent: len(k.Events)}}
}

// confirm confirms the claim before the send of key k's i-th event; when
// it is lost, the key stops there as a round cut short does (nothing is
// counted against it), and confirm returns its outcome and true.
func (r *Relay[K, E]) confirm(ctx context.Context, hold *holdCheck, k sqlstore.OutboxClaimKey, i int) (keyOutcome, bool) {
	err := hold.held()
	switch {
	case err == nil:
		return keyOutcome{}, false
	case ctx.Err() != nil:
		return r.failed(ctx, k, i, ctx.Err()), true
	}
	return keyOutcome{result: sqlstore.OutboxResult{Sent: i}, err: err, stopped: true}, true
}

// send sends one event within SendTimeout; a panic of the sink is a
// failed send.
func (r *Relay[K, E]) send(ctx context.Context, key K, e E) (err error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.SendTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the sink panicked: %v", p)
		}
	}()
	return r.cfg.Sink.Send(ctx, key, e)
}

// failed is the outcome of key k whose i-th event failed with err: it
// retries after its backoff, or parks.
func (r *Relay[K, E]) failed(ctx context.Context, k sqlstore.OutboxClaimKey, i int, err error) keyOutcome {
	attempts := 1
	if i == 0 {
		attempts = k.Attempts + 1
	}
	res := sqlstore.OutboxResult{Sent: i, Attempts: attempts, Reason: err.Error()}
	if ctx.Err() != nil {
		return keyOutcome{result: res, err: err, stopped: true}
	}
	if runtime.IsPermanent(err) || (r.cfg.ParkAfter > 0 && attempts >= r.cfg.ParkAfter) {
		res.Park = true
		res.Reason = fmt.Sprintf("%s (attempt %d)", res.Reason, attempts)
	} else {
		res.RetryAt = time.Now().Add(r.cfg.Backoff.delay(attempts))
	}
	return keyOutcome{result: res, err: err}
}

// roundKey is the context key of a send's round number.
type roundKey struct{}

func withRound(ctx context.Context, id uint64) context.Context {
	return context.WithValue(ctx, roundKey{}, id)
}
