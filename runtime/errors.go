package runtime

import (
	"errors"
	"fmt"
)

// Sentinel errors returned by the engine. Test for them with errors.Is: the
// returned errors wrap them with the key, the limit or the subscriber involved.
var (
	// ErrClosed is returned by Submit, Replay and Discard once Close has begun.
	ErrClosed = errors.New("ordergen: engine closed")
	// ErrBacklogFull is returned when a per-key or total backlog limit is
	// reached and the policy is reject, or timeout and the wait ran out.
	ErrBacklogFull = errors.New("ordergen: backlog full")
	// ErrNotParked is returned by Replay and Discard for a key that is not parked.
	ErrNotParked = errors.New("ordergen: key not parked")
	// ErrReplayInProgress is returned by Replay and Discard while another
	// replay of the same key runs.
	ErrReplayInProgress = errors.New("ordergen: replay in progress")
	// ErrParkedAgain is returned by Replay when a replayed event failed again
	// and the key went back to the park.
	ErrParkedAgain = errors.New("ordergen: key parked again during replay")
	// ErrNoSubscribers is returned by Topic.Publish when the topic has no
	// subscriber: the event would go nowhere.
	ErrNoSubscribers = errors.New("ordergen: topic has no subscribers")
	// ErrInvalidConfig is wrapped by every configuration error from New.
	ErrInvalidConfig = errors.New("ordergen: invalid configuration")
	// ErrInvalidEvent is wrapped by the errors generated publishers return
	// for an event they refuse before submitting it (an empty key, a version
	// below 1).
	ErrInvalidEvent = errors.New("ordergen: invalid event")
)

// Permanent marks err as permanent: the engine does not retry it and applies
// the exhaustion policy at once. A nil err stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	_, ok := errors.AsType[*permanentError](err)
	return ok
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Skip returns the error a handler (usually a generated guard) returns to
// say that it deliberately did not apply an event: a duplicate, a stale
// version or a late state transition. The engine counts the event as
// skipped, with the reason, and does not retry it.
func Skip(reason string) error { return &skipError{reason: reason} }

// SkipApplied is Skip for an event that a guard did not hand to the
// handler but whose key moved on all the same: the guard stored its version
// (a late state transition, an event the handler does not implement). The
// engine counts the event as skipped, with the reason, and, as after a
// handled event, offers the key's held events again: the event may have
// filled their version gap.
func SkipApplied(reason string) error { return &skipError{reason: reason, applied: true} }

// IsSkip reports whether err came from Skip or SkipApplied, and returns its
// reason.
func IsSkip(err error) (reason string, ok bool) {
	if s, ok := errors.AsType[*skipError](err); ok {
		return s.reason, true
	}
	return "", false
}

// skipApplied reports whether err came from SkipApplied.
func skipApplied(err error) bool {
	s, ok := errors.AsType[*skipError](err)
	return ok && s.applied
}

type skipError struct {
	reason  string
	applied bool // SkipApplied: the key moved on
}

func (e *skipError) Error() string { return "skipped: " + e.reason }

// Hold returns the error a handler (usually a generated version guard)
// returns to say that an event arrived too early (a gap in the versions)
// and must wait. The engine keeps it aside in the key's resequencer and
// offers it again, in arrival order, after each event of that key that is
// handled (or skipped with SkipApplied). When the resequencer's bounds (Config.MaxHeld, Config.MaxHold) are
// hit, the key is parked with the reason.
func Hold(reason string) error { return &holdError{reason: reason} }

// IsHold reports whether err came from Hold, and returns its reason.
func IsHold(err error) (reason string, ok bool) {
	if h, ok := errors.AsType[*holdError](err); ok {
		return h.reason, true
	}
	return "", false
}

type holdError struct{ reason string }

func (e *holdError) Error() string { return "held: " + e.reason }

// PanicError is the failure recorded when a handler panics. The worker and
// the lane survive; the panic counts as one failed attempt.
type PanicError struct {
	// Value is what the handler passed to panic.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("handler panicked: %v", e.Value) }

// Unwrap returns Value when it is an error, so errors.Is sees through panics
// of error values.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
