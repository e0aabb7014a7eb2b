package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
	Subscriber string    `json:"subscriber"`
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

// mutate authorizes and carries out the mutation verb that r asks for
// (POST, form-encoded: entity, subscriber, key). A refusal (cross-origin,
// read-only, unauthorized, bad input) returns a *refusal and is not kept as
// an action; everything else is kept, and logged, with its outcome.
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
	a := Action{Verb: verb, Entity: r.PostForm.Get("entity"), Subscriber: r.PostForm.Get("subscriber"), Key: r.PostForm.Get("key")}
	if a.Entity == "" || a.Subscriber == "" || !r.PostForm.Has("key") {
		return actionRecord{}, &refusal{http.StatusBadRequest, errors.New("console: a mutation needs entity, subscriber and key in its form-encoded body")}
	}
	if c.readOnly() {
		c.logger.Warn("ordergen console: mutation refused: read-only", "action", verb, "entity", a.Entity,
			"subscriber", a.Subscriber, "key", a.Key, "remote", r.RemoteAddr)
		return actionRecord{}, &refusal{http.StatusForbidden, ErrReadOnly}
	}
	who, err := c.cfg.Authorize(r, a)
	if err != nil {
		c.logger.Warn("ordergen console: mutation refused", "action", verb, "entity", a.Entity,
			"subscriber", a.Subscriber, "key", a.Key, "remote", r.RemoteAddr, "why", err)
		return actionRecord{}, &refusal{http.StatusForbidden, fmt.Errorf("console: not allowed: %w", err)}
	}
	rec := actionRecord{At: time.Now(), Who: who, Verb: verb, Entity: a.Entity, Subscriber: a.Subscriber, Key: a.Key}
	in, err := c.inspector(r.Context(), a.Entity)
	if err == nil {
		ctx, cancel := context.WithTimeout(r.Context(), c.cfg.ActionTimeout)
		var res inspect.Result
		if verb == "replay" {
			res, err = in.Replay(ctx, a.Subscriber, a.Key)
		} else {
			res, err = in.Discard(ctx, a.Subscriber, a.Key)
		}
		cancel()
		rec.Message, rec.Events, rec.Request = res.Message, res.Events, res.Request
		rec.Status = "done"
		if !res.Done {
			rec.Status = "requested"
		}
	}
	rec.code = http.StatusOK
	if err != nil {
		rec.code, rec.Status, rec.Message = failure(err)
		if rec.Status == "running" {
			rec.Message = fmt.Sprintf("%s of %s in %s still running after %v; it goes on", verb, a.Key, a.Subscriber, c.cfg.ActionTimeout)
		}
	} else if rec.Status == "requested" {
		rec.code = http.StatusAccepted
	}
	rec = c.log.add(rec)
	c.logger.Info("ordergen console: "+verb, "who", who, "entity", a.Entity, "subscriber", a.Subscriber, "key", a.Key,
		"status", rec.Status, "result", rec.Message, "remote", r.RemoteAddr)
	return rec, nil
}

// failure returns the status code, the action's status and the message of
// a failed mutation.
func failure(err error) (int, string, string) {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusAccepted, "running", err.Error()
	case errors.Is(err, inspect.ErrNotFound):
		return http.StatusNotFound, "failed", err.Error()
	case errors.Is(err, runtime.ErrInvalidEvent), errors.Is(err, runtime.ErrInvalidConfig):
		return http.StatusBadRequest, "failed", err.Error()
	case errors.Is(err, runtime.ErrNotParked), errors.Is(err, runtime.ErrReplayInProgress),
		errors.Is(err, runtime.ErrParkedAgain), errors.Is(err, runtime.ErrClosed):
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
