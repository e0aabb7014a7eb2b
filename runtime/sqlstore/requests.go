package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Action is what an operator request asks the service to do with a key.
type Action string

const (
	// Replay re-runs the key's parked events in order (Engine.Replay).
	Replay Action = "replay"
	// Discard removes the key's parked events (Engine.Discard).
	Discard Action = "discard"
	// CancelAttempt ends the context of the attempt of the key's handler in
	// progress (Engine.CancelAttempt): the retry policy, then the park,
	// follow.
	CancelAttempt Action = "cancel-attempt"
	// ParkNow parks the key now with its pending events, withdrawing a
	// handler of it in an attempt (Engine.ParkNow).
	ParkNow Action = "park-now"
)

// Request is an operator request and what became of it.
type Request struct {
	// ID identifies the request.
	ID int64
	// Namespace is where the operator saw the key parked ("Account",
	// "Account/audit").
	Namespace string
	// Key is the key, as text.
	Key string
	// Action is what was asked.
	Action Action
	// Requested is when the request was made.
	Requested time.Time
	// Claimed is when a service took the request up; zero before.
	Claimed time.Time
	// Done is when the service finished it; zero before.
	Done time.Time
	// Result says how it went once Done: "replayed", "discarded N events",
	// "cancelled the running attempt", "parked N events now", "error: ..."
	// or, for a request withdrawn before a service took it up
	// (CancelRequest), "cancelled: ...".
	Result string
}

// Pending reports whether the request is not finished.
func (r Request) Pending() bool { return r.Done.IsZero() }

// Cancelled reports whether the request was withdrawn before a service
// took it up (CancelRequest).
func (r Request) Cancelled() bool { return strings.HasPrefix(r.Result, cancelledPrefix) }

const cancelledPrefix = "cancelled: "

// ErrNoRequest is returned by RequestByID for an unknown ID.
var ErrNoRequest = errors.New("sqlstore: no such request")

// ErrRequestTaken is returned by CancelRequest for a request that a service
// took up already: it runs, or ran, to its end.
var ErrRequestTaken = errors.New("sqlstore: the request was taken up by a service")

// Request asks the service that serves namespace's entity (see Server) to
// carry out action on key, and returns the pending request. Replay needs the
// service's handlers, and CancelAttempt and ParkNow its running attempts, so
// only a running service can carry them out.
func (s *Store) Request(ctx context.Context, namespace, key string, action Action) (Request, error) {
	switch action {
	case Replay, Discard, CancelAttempt, ParkNow:
	default:
		return Request{}, fmt.Errorf("sqlstore: unknown action %q: want replay, discard, cancel-attempt or park-now", action)
	}
	r := Request{Namespace: namespace, Key: key, Action: action, Requested: time.Now()}
	err := s.db.QueryRowContext(ctx, `INSERT INTO ordergen_requests (namespace, key, action, requested_ns) VALUES ($1, $2, $3, $4) RETURNING id`,
		namespace, key, string(action), r.Requested.UnixNano()).Scan(&r.ID)
	if err != nil {
		return Request{}, fmt.Errorf("sqlstore: request %s of %s %q: %w", action, namespace, key, err)
	}
	return r, nil
}

const requestColumns = `id, namespace, key, action, requested_ns, claimed_ns, done_ns, result`

func scanRequest(row interface{ Scan(...any) error }) (Request, error) {
	var r Request
	var action string
	var requested int64
	var claimed, done sql.NullInt64
	if err := row.Scan(&r.ID, &r.Namespace, &r.Key, &action, &requested, &claimed, &done, &r.Result); err != nil {
		return Request{}, err
	}
	r.Action, r.Requested = Action(action), timeFromSQL(requested)
	if claimed.Valid {
		r.Claimed = timeFromSQL(claimed.Int64)
	}
	if done.Valid {
		r.Done = timeFromSQL(done.Int64)
	}
	return r, nil
}

// RequestByID returns request id as it is now.
func (s *Store) RequestByID(ctx context.Context, id int64) (Request, error) {
	r, err := scanRequest(s.db.QueryRowContext(ctx, `SELECT `+requestColumns+` FROM ordergen_requests WHERE id = $1`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Request{}, fmt.Errorf("%w: %d", ErrNoRequest, id)
	case err != nil:
		return Request{}, fmt.Errorf("sqlstore: read request %d: %w", id, err)
	}
	return r, nil
}

// Requests returns the latest limit requests, newest first.
func (s *Store) Requests(ctx context.Context, limit int) ([]Request, error) {
	return s.queryRequests(ctx, `SELECT `+requestColumns+` FROM ordergen_requests ORDER BY id DESC LIMIT $1`, limit)
}

func (s *Store) queryRequests(ctx context.Context, query string, args ...any) ([]Request, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list requests: %w", err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: list requests: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list requests: %w", err)
	}
	return out, nil
}

// Unfinished returns the requests that are not finished (taken up by a
// service or not), oldest first.
func (s *Store) Unfinished(ctx context.Context) ([]Request, error) {
	return s.queryRequests(ctx, `SELECT `+requestColumns+` FROM ordergen_requests WHERE done_ns IS NULL ORDER BY id`)
}

// CancelRequest withdraws request id before a service takes it up: it is
// finished at once with the result "cancelled: " followed by reason, and no
// service will carry it out. It returns the request as it is then; for a
// request a service took up already, with an error wrapping
// ErrRequestTaken (unless it was cancelled before: cancelling twice is
// harmless).
func (s *Store) CancelRequest(ctx context.Context, id int64, reason string) (Request, error) {
	now := time.Now().UnixNano()
	res, err := s.db.ExecContext(ctx, `UPDATE ordergen_requests SET claimed_ns = $2, done_ns = $2, result = $3 WHERE id = $1 AND claimed_ns IS NULL`,
		id, now, cancelledPrefix+reason)
	if err != nil {
		return Request{}, fmt.Errorf("sqlstore: cancel request %d: %w", id, err)
	}
	cancelled, err := oneRow(res)
	if err != nil {
		return Request{}, err
	}
	r, err := s.RequestByID(ctx, id)
	if err != nil {
		return Request{}, err
	}
	if !cancelled && !r.Cancelled() {
		return r, fmt.Errorf("%w: request %d, at %s", ErrRequestTaken, id, r.Claimed.UTC().Format(time.RFC3339))
	}
	return r, nil
}

// pending returns the unclaimed requests for entity's namespaces (entity,
// and entity/ followed by a subscriber name), oldest first.
func (s *Store) pending(ctx context.Context, entity string) ([]Request, error) {
	prefix := entity + "/"
	return s.queryRequests(ctx, `SELECT `+requestColumns+` FROM ordergen_requests
		WHERE claimed_ns IS NULL AND (namespace = $1 OR substr(namespace, 1, $3) = $2) ORDER BY id`,
		entity, prefix, len(prefix))
}

// claim takes request id up, unless another service did.
func (s *Store) claim(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE ordergen_requests SET claimed_ns = $2 WHERE id = $1 AND claimed_ns IS NULL`, id, time.Now().UnixNano())
	if err != nil {
		return false, fmt.Errorf("sqlstore: claim request %d: %w", id, err)
	}
	return oneRow(res)
}

// finish records the result of request id.
func (s *Store) finish(ctx context.Context, id int64, result string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE ordergen_requests SET done_ns = $2, result = $3 WHERE id = $1`, id, time.Now().UnixNano(), result); err != nil {
		return fmt.Errorf("sqlstore: finish request %d: %w", id, err)
	}
	return nil
}
