package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// actionRecord is one mutation asked of the console and what became of it.
type actionRecord struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Who        string    `json:"who"`
	Verb       string    `json:"verb"`
	Entity     string    `json:"entity"`
	Subscriber string    `json:"subscriber,omitempty"`
	Transport  string    `json:"transport,omitempty"`
	Key        string    `json:"key"`
	// Status is "done", "requested" (left for the running service),
	// "running" (not finished within ActionTimeout) or "failed".
	Status  string `json:"status"`
	Message string `json:"message"`
	// Events is how many events a discard removed.
	Events int `json:"events,omitempty"`
	// Request identifies the request left for the running service.
	Request int64 `json:"request,omitempty"`
	code    int
}

// Failed reports whether the action failed.
func (a actionRecord) Failed() bool { return a.Status == "failed" }

// Where says where the action acted: its subscriber, or its transport.
func (a actionRecord) Where() string {
	if a.Subscriber != "" {
		return a.Subscriber
	}
	return a.Transport
}

// actionLog keeps the latest actions, for the pages and api/actions.
type actionLog struct {
	// mu guards what follows.
	mu     sync.Mutex
	nextID int64
	ring   []actionRecord // oldest first
	max    int
}

func newActionLog(n int) *actionLog { return &actionLog{max: n} }

func (l *actionLog) add(a actionRecord) actionRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextID++
	a.ID = l.nextID
	if len(l.ring) == l.max {
		l.ring = slices.Delete(l.ring, 0, 1)
	}
	l.ring = append(l.ring, a)
	return a
}

// latest returns up to n actions, newest first.
func (l *actionLog) latest(n int) []actionRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]actionRecord, 0, min(n, len(l.ring)))
	for i := len(l.ring) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, l.ring[i])
	}
	return out
}

// byID returns action id, if it is still kept.
func (l *actionLog) byID(id int64) (actionRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.ring {
		if a.ID == id {
			return a, true
		}
	}
	return actionRecord{}, false
}

// refusal is a mutation refused before it ran.
type refusal struct {
	code int
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }

// The verbs of the mutations (Action.Verb).
const (
	verbReplay        = "replay"
	verbDiscard       = "discard"
	verbCancelAttempt = "cancel-attempt"
	verbParkNow       = "park-now"
	verbOutboxRetry   = "outbox-retry"
	verbOutboxDiscard = "outbox-discard"
)

// isOutboxVerb reports whether verb acts on a key of a transport's outbox
// (the form names a transport) rather than of a subscriber.
func isOutboxVerb(verb string) bool { return verb == verbOutboxRetry || verb == verbOutboxDiscard }

// mutate authorizes and carries out the mutation verb that r asks for
// (POST, form-encoded: entity, subscriber and key, or for an outbox's key
// transport, entity and key). A refusal (cross-origin, read-only,
// unauthorized, bad input) returns a *refusal and is not kept as an
// action; everything else is kept, and logged, with its outcome.
func (c *Console) mutate(r *http.Request, verb string) (actionRecord, error) {
	if err := c.cfg.CrossOrigin.Check(r); err != nil {
		c.logger.Warn("ordergen console: cross-origin mutation refused", "action", verb, "origin", r.Header.Get("Origin"),
			"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "remote", r.RemoteAddr)
		return actionRecord{}, &refusal{http.StatusForbidden, fmt.Errorf("console: %w", err)}
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		return actionRecord{}, &refusal{http.StatusBadRequest, fmt.Errorf("console: bad form: %w", err)}
	}
	a, run, rf := c.target(r, verb)
	if rf != nil {
		return actionRecord{}, rf
	}
	if c.readOnly() {
		c.logger.Warn("ordergen console: mutation refused: read-only", "action", verb, "entity", a.Entity,
			"subscriber", a.Subscriber, "transport", a.Transport, "key", a.Key, "remote", r.RemoteAddr)
		return actionRecord{}, &refusal{http.StatusForbidden, ErrReadOnly}
	}
	who, err := c.cfg.Authorize(r, a)
	if err != nil {
		c.logger.Warn("ordergen console: mutation refused", "action", verb, "entity", a.Entity,
			"subscriber", a.Subscriber, "transport", a.Transport, "key", a.Key, "remote", r.RemoteAddr, "why", err)
		return actionRecord{}, &refusal{http.StatusForbidden, fmt.Errorf("console: not allowed: %w", err)}
	}
	rec := actionRecord{At: time.Now(), Who: who, Verb: verb, Entity: a.Entity, Subscriber: a.Subscriber, Transport: a.Transport, Key: a.Key}
	ctx, cancel := context.WithTimeout(r.Context(), c.cfg.ActionTimeout)
	res, err := run(ctx, who)
	cancel()
	rec.Message, rec.Events, rec.Request = res.Message, res.Events, res.Request
	rec.Status = "done"
	if !res.Done {
		rec.Status = "requested"
	}
	rec.code = http.StatusOK
	if err != nil {
		rec.code, rec.Status, rec.Message = failure(err)
		if rec.Status == "running" {
			rec.Message = fmt.Sprintf("%s of %s in %s still running after %v; it goes on", verb, a.Key, rec.Where(), c.cfg.ActionTimeout)
		}
	} else if rec.Status == "requested" {
		rec.code = http.StatusAccepted
	}
	rec = c.log.add(rec)
	c.logger.Info("ordergen console: "+verb, "who", who, "entity", a.Entity, "subscriber", a.Subscriber, "transport", a.Transport,
		"key", a.Key, "status", rec.Status, "result", rec.Message, "remote", r.RemoteAddr)
	return rec, nil
}

// runner carries out an authorized mutation for who.
type runner func(ctx context.Context, who string) (inspect.Result, error)

// target reads what the form of a mutation verb names, and returns the
// Action for the authorizer and what carries it out; or a refusal, for a
// form that names nothing it can act on. An unknown entity or subscriber
// is not refused here: it is an action that fails, as a key that is not
// parked is.
func (c *Console) target(r *http.Request, verb string) (Action, runner, *refusal) {
	f := r.PostForm
	a := Action{Verb: verb, Entity: f.Get("entity"), Key: f.Get("key")}
	if isOutboxVerb(verb) {
		if a.Entity == "" || !f.Has("key") || !f.Has("transport") {
			return a, nil, &refusal{http.StatusBadRequest, errors.New("console: an outbox's mutation needs transport, entity and key in its form-encoded body")}
		}
		op, name, err := c.outboxOperator(f.Get("transport"))
		if err != nil {
			return a, nil, &refusal{http.StatusNotFound, err}
		}
		a.Transport = name
		return a, func(ctx context.Context, _ string) (inspect.Result, error) {
			if verb == verbOutboxRetry {
				return op.RetryKey(ctx, a.Entity, a.Key)
			}
			return op.DiscardKey(ctx, a.Entity, a.Key)
		}, nil
	}
	a.Subscriber = f.Get("subscriber")
	if a.Entity == "" || a.Subscriber == "" || !f.Has("key") {
		return a, nil, &refusal{http.StatusBadRequest, errors.New("console: a mutation needs entity, subscriber and key in its form-encoded body")}
	}
	return a, func(ctx context.Context, who string) (inspect.Result, error) {
		in, err := c.inspector(ctx, a.Entity)
		if err != nil {
			return inspect.Result{}, err
		}
		switch verb {
		case verbReplay:
			return in.Replay(ctx, a.Subscriber, a.Key)
		case verbDiscard:
			return in.Discard(ctx, a.Subscriber, a.Key)
		}
		op, ok := in.(inspect.KeyOperator)
		if !ok {
			return inspect.Result{}, fmt.Errorf("console: %w: this console's view of %s cannot %s", errors.ErrUnsupported, a.Entity, verb)
		}
		if verb == verbCancelAttempt {
			return op.CancelAttempt(ctx, a.Subscriber, a.Key, fmt.Errorf("%w: %s, from the console", runtime.ErrOperatorCancel, who))
		}
		return op.ParkNow(ctx, a.Subscriber, a.Key, "parked now by "+who+", from the console")
	}, nil
}

// outboxOperator returns the transport whose index in Config.Transports is
// index, if it acts on its outbox's keys, and its name.
func (c *Console) outboxOperator(index string) (inspect.OutboxOperator, string, error) {
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= len(c.cfg.Transports) {
		return nil, "", fmt.Errorf("%w: no transport %q", inspect.ErrNotFound, index)
	}
	t := c.cfg.Transports[i]
	op, ok := t.(inspect.OutboxOperator)
	if !ok {
		return nil, "", fmt.Errorf("%w: transport %d (%s) has no outbox keys to act on", inspect.ErrNotFound, i, t.TransportStatus().Kind)
	}
	return op, t.TransportStatus().Name, nil
}

// failure returns the status code, the action's status and the message of
// a failed mutation.
func failure(err error) (int, string, string) {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusAccepted, "running", err.Error()
	case errors.Is(err, inspect.ErrNotFound):
		return http.StatusNotFound, "failed", err.Error()
	case errors.Is(err, runtime.ErrInvalidEvent), errors.Is(err, runtime.ErrInvalidConfig), errors.Is(err, errors.ErrUnsupported):
		return http.StatusBadRequest, "failed", err.Error()
	case errors.Is(err, runtime.ErrNotParked), errors.Is(err, runtime.ErrReplayInProgress),
		errors.Is(err, runtime.ErrParkedAgain), errors.Is(err, runtime.ErrClosed),
		errors.Is(err, runtime.ErrNotRunning), errors.Is(err, runtime.ErrNothingPending):
		return http.StatusConflict, "failed", err.Error()
	}
	return http.StatusInternalServerError, "failed", err.Error()
}

// statusOf returns the status code of a read's error.
func statusOf(err error) int {
	code, _, _ := failure(err)
	if code == http.StatusAccepted {
		return http.StatusGatewayTimeout
	}
	return code
}
