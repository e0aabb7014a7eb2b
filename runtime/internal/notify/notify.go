// Package notify is for the runtime's own packages: a broadcast that wakes
// goroutines waiting for a condition that other goroutines make true.
package notify

import (
	"sync"
	"sync/atomic"
)

// Notifier wakes goroutines waiting for a condition that other goroutines
// make true (room in a backlog, no busy lane, no send in flight). A waiter
// registers before it looks at the condition and the signaller changes the
// condition before it looks for waiters, so one of them always sees the
// other. The zero value is ready to use.
type Notifier struct {
	waiters atomic.Int64

	// mu guards ch.
	mu sync.Mutex
	ch chan struct{} // closed by the next Broadcast; nil while nobody waits
}

// Register announces a waiter and returns the channel the next Broadcast
// closes. The waiter then looks at its condition, and either calls
// Unregister (the condition held) or waits on the channel and calls
// Unregister after it.
func (n *Notifier) Register() <-chan struct{} {
	n.waiters.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// Unregister withdraws a waiter announced by Register.
func (n *Notifier) Unregister() { n.waiters.Add(-1) }

// Waiting reports whether anybody waits.
func (n *Notifier) Waiting() bool { return n.waiters.Load() > 0 }

// BroadcastIfWaiting wakes the waiters, if there are any: a signaller that
// changes the condition often pays one atomic load while nobody waits.
func (n *Notifier) BroadcastIfWaiting() {
	if n.waiters.Load() > 0 {
		n.Broadcast()
	}
}

// Broadcast wakes every waiter registered so far.
func (n *Notifier) Broadcast() {
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}
