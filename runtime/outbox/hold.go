package outbox

import "sync"

// A round's claim holds its keys for as long as the database session of
// its transaction (see sqlstore.OutboxClaim.Held). The server may end that
// session while the round sends (pg_terminate_backend, a restart, a cut
// connection); the keys are free at once, and another relay may ship them
// while this one still holds their events. So before each send the round
// confirms its claim with a statement of that session that began after the
// send was asked for, and once one fails it sends nothing more: of a key
// held by both relays, only the send in progress when the session ended
// goes twice (or the one about to begin, its claim confirmed just before).
//
// The senders of a round share the checks: a sender waits for the next
// check to begin, not for one of its own, so Senders keys at once cost
// about one statement per wave of sends rather than one each (one in
// flight while the others wait for the one after it, as group commit
// does).

// holdCheck confirms a round's claim for its senders.
type holdCheck struct {
	check   func() error // bounded in time, and ended by a crash
	waiting func()       // the tests': called when a caller waits for a check

	// mu guards the fields below.
	mu       sync.Mutex
	running  bool          // a check is in flight
	started  uint64        // checks begun
	finished uint64        // checks ended (the latest began as number finished)
	err      error         // the first failure: the claim is lost for good
	ended    chan struct{} // closed, and replaced, when a check ends
}

func newHoldCheck(check func() error) *holdCheck {
	return &holdCheck{check: check, ended: make(chan struct{})}
}

// held returns nil once a check that began after it was called confirmed
// the claim, or the error of the check that found it lost (at once, when
// one already has). A caller runs the check itself when none is in
// flight.
func (h *holdCheck) held() error {
	h.mu.Lock()
	want := h.started + 1 // the check in flight, if any, began before this call
	for {
		switch {
		case h.err != nil:
			err := h.err
			h.mu.Unlock()
			return err
		case h.finished >= want:
			h.mu.Unlock()
			return nil
		case !h.running:
			h.running = true
			h.started++
			h.mu.Unlock()
			err := h.check()
			h.mu.Lock()
			h.running = false
			h.finished = h.started
			if err != nil && h.err == nil {
				h.err = err
			}
			close(h.ended)
			h.ended = make(chan struct{})
			continue
		}
		ended := h.ended
		h.mu.Unlock()
		if h.waiting != nil {
			h.waiting()
		}
		<-ended
		h.mu.Lock()
	}
}

// lost returns the error of the check that found the claim lost, or nil.
func (h *holdCheck) lost() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
