package delivery

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Skip is an event that a harness's guards skipped, with the guard's
// reason.
type Skip[E any] struct {
	// Event is the event, as delivered.
	Event E
	// Reason is the guard's reason ("late transition: ...").
	Reason string
}

// Skips records the skips that a harness's subscriber reports (its
// OnSkip). It is safe for concurrent use: the subscriber's workers add.
type Skips[E any] struct {
	mu   sync.Mutex // guards list
	list []Skip[E]
}

// Add records that the guards skipped ev for reason.
func (s *Skips[E]) Add(ev E, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, Skip[E]{Event: ev, Reason: reason})
}

// Take returns the skips recorded since the last Take, in the order they
// were added, and forgets them.
func (s *Skips[E]) Take() []Skip[E] {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.list
	s.list = nil
	return out
}

// ErrSkippedInOrder is what InOrder's error wraps: the guards skipped
// events delivered once each, in publication order.
var ErrSkippedInOrder = errors.New("the guards skipped events delivered in publication order")

// InOrder checks the skips of a delivery in publication order, the oracle
// that a chaotic delivery is compared with: it returns nil when the guards
// skipped nothing but for the reasons in allow, and otherwise an error
// wrapping ErrSkippedInOrder that names each other skip (describe names an
// event: its name, key and version) with its reason. In order a skip is
// almost always a schema mistake (an event that happens within a state
// moving to it with to: instead of taking in:), which a chaotic delivery
// through the same guards repeats and so cannot catch; a test names the
// reasons of the skips it means (a repeated event of an entity without a
// version) in allow.
func InOrder[E any](skips []Skip[E], allow []string, describe func(E) string) error {
	var lines []string
	for _, s := range skips {
		if !slices.Contains(allow, s.Reason) {
			lines = append(lines, fmt.Sprintf("\t%s: %s", describe(s.Event), s.Reason))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of them (an event that happens within a state without moving it "+
		"takes in: [states] in the schema, not to:; allow a deliberate skip by its reason):\n%s",
		ErrSkippedInOrder, len(lines), strings.Join(lines, "\n"))
}
