package transport

import (
	"errors"
	"sync"
)

// Loss is the end of a connection or a subscription, as a UnitConn and a
// UnitFeed report it: Lose records the first cause and closes Lost's
// channel, once, from whichever goroutine sees the end first (the client's
// close callback, a delivery that proves the unit gone). Embedding one
// gives a UnitConn its Lost and Err. The zero value is ready.
type Loss struct {
	mu    sync.Mutex
	ch    chan struct{}
	cause error
}

// errLostWithoutCause is what Err says of a loss told no cause.
var errLostWithoutCause = errors.New("ordergen: lost without a cause")

func (l *Loss) init() {
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
}

// Lose records cause and closes Lost's channel; it does nothing after the
// first call. A nil cause is recorded as a loss without a cause.
func (l *Loss) Lose(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if IsClosed(l.ch) {
		return
	}
	if cause == nil {
		cause = errLostWithoutCause
	}
	l.cause = cause
	close(l.ch)
}

// Lost is closed once Lose was called.
func (l *Loss) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	return l.ch
}

// Err returns the first cause given to Lose, or nil before the loss.
func (l *Loss) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}
