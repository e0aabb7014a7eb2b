package runtime

import (
	"context"
	"fmt"
)

// DeadLetterEvent is an event handed to a DeadLetterSink.
type DeadLetterEvent[K comparable, E any] struct {
	// Key is the event's key.
	Key K
	// Event is the event that failed.
	Event E
	// Err is its last failure.
	Err error
	// Attempts is how many times it was tried.
	Attempts int
}

// DeadLetterSink receives events under the SendToDeadLetter exhaustion policy. It
// is called from the key's lane, so it sees a key's dead letters in order.
// An error from it parks the event instead, so nothing is lost.
type DeadLetterSink[K comparable, E any] func(ctx context.Context, dl DeadLetterEvent[K, E]) error

// deadLetter hands it to the sink. When the sink fails it returns the
// failure to park the event with instead.
func (w *worker[K, E]) deadLetter(l *lane[K, E], it *item[E], err error) error {
	e := w.e
	sinkErr := func() (serr error) {
		defer func() {
			if r := recover(); r != nil {
				serr = &PanicError{Value: r}
			}
		}()
		return e.cfg.DeadLetter(e.base, DeadLetterEvent[K, E]{Key: l.key, Event: it.ev, Err: err, Attempts: int(it.attempts)})
	}()
	if sinkErr != nil {
		e.cfg.Logger.Warn("ordergen: dead-letter sink failed; parking the key instead",
			"engine", e.cfg.Name, "key", l.key, "error", sinkErr)
		return fmt.Errorf("%w (dead-letter sink failed: %v)", err, sinkErr)
	}
	w.t.deadLettered++
	return nil
}
