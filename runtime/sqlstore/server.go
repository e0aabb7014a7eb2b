package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Operator is what a Server drives: a generated dispatcher (its Replay and
// Discard act on every subscriber where the key is parked) or an engine.
type Operator[K comparable] interface {
	// Replay re-runs the key's parked events.
	Replay(ctx context.Context, key K) error
	// Discard removes the key's parked events and returns how many.
	Discard(ctx context.Context, key K) (int, error)
}

// KeyOperator is an Operator that also acts on a key that runs: a generated
// dispatcher (its CancelAttempt and ParkNow act on every subscriber) or an
// engine. A Server whose Operator is not one finishes the cancel-attempt and
// park-now requests with an error that says so.
type KeyOperator[K comparable] interface {
	Operator[K]
	// CancelAttempt ends the context of the attempt of key's handler in
	// progress with cause.
	CancelAttempt(key K, cause error) error
	// ParkNow parks key now with its pending events under reason, and
	// returns how many.
	ParkNow(ctx context.Context, key K, reason string) (int, error)
}

// Server carries out the operator requests (Store.Request, the
// ordergen-parked command) for one entity in the running service, which has
// the handlers a replay needs. Requests for the entity's namespace and its
// subscribers' ("Account", "Account/audit") go to Operator; several replicas
// may serve one store: each request is claimed by one of them. A request
// for a key its replica has not parked finishes with that error.
type Server[K comparable] struct {
	// Store holds the requests.
	Store *Store
	// Entity is the entity whose requests this server carries out.
	Entity string
	// Operator replays and discards keys: the entity's dispatcher.
	Operator Operator[K]
	// Every is how often Serve looks for requests. Zero: one second.
	Every time.Duration
	// Logger receives the requests carried out and the errors met. Nil:
	// slog.Default().
	Logger *slog.Logger
}

// Serve carries out requests every Server.Every until ctx ends, then
// returns nil. Errors of the store are logged and do not stop it.
func (srv *Server[K]) Serve(ctx context.Context) error {
	every := srv.Every
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := srv.ServeOnce(ctx); err != nil && ctx.Err() == nil {
			srv.logger().Error("ordergen: serving operator requests", "entity", srv.Entity, "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (srv *Server[K]) logger() *slog.Logger {
	if srv.Logger != nil {
		return srv.Logger
	}
	return slog.Default()
}

// ServeOnce carries out the pending requests once, oldest first, and
// returns how many it finished.
func (srv *Server[K]) ServeOnce(ctx context.Context) (int, error) {
	if srv.Store == nil || srv.Operator == nil || srv.Entity == "" {
		return 0, errors.New("sqlstore: Server needs a Store, an Entity and an Operator")
	}
	reqs, err := srv.Store.pending(ctx, srv.Entity)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, r := range reqs {
		ok, err := srv.Store.claim(ctx, r.ID)
		if err != nil {
			return done, err
		}
		if !ok {
			continue // another replica took it
		}
		result := srv.carryOut(ctx, r)
		if err := srv.Store.finish(ctx, r.ID, result); err != nil {
			return done, err
		}
		srv.logger().Info("ordergen: operator request done", "id", r.ID, "namespace", r.Namespace, "key", r.Key, "action", r.Action, "result", result)
		done++
	}
	return done, nil
}

// carryOut runs one request and says how it went.
func (srv *Server[K]) carryOut(ctx context.Context, r Request) string {
	key, err := durable.DecodeKey[K](r.Key)
	if err != nil {
		return "error: " + err.Error()
	}
	switch r.Action {
	case Replay:
		if err := srv.Operator.Replay(ctx, key); err != nil {
			return "error: " + err.Error()
		}
		return "replayed"
	case Discard:
		n, err := srv.Operator.Discard(ctx, key)
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("discarded %d events", n)
	case CancelAttempt, ParkNow:
		op, ok := srv.Operator.(KeyOperator[K])
		if !ok {
			return fmt.Sprintf("error: the service's operator (%T) cannot %s: regenerate its dispatcher with this ordergen", srv.Operator, r.Action)
		}
		if r.Action == CancelAttempt {
			if err := op.CancelAttempt(key, fmt.Errorf("%w: operator request %d", runtime.ErrOperatorCancel, r.ID)); err != nil {
				return "error: " + err.Error()
			}
			return "cancelled the running attempt"
		}
		n, err := op.ParkNow(ctx, key, fmt.Sprintf("parked now by operator request %d", r.ID))
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("parked %d events now", n)
	}
	return fmt.Sprintf("error: unknown action %q", r.Action)
}
