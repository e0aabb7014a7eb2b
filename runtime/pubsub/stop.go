package pubsub

import (
	"context"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime/transport"
)

// stop ends a Run whose receiving was stopped: the ownerships end (the
// handlers still running get until Close's context or DrainTimeout, none
// when killed), then Run waits for the client to send the last
// acknowledgements and nacks (Receive's return, unless stopped says it
// returned already) and for the dead-letter publishes, until Close's
// context or another DrainTimeout ends, and not at all when killed: Pub/Sub
// may be unreachable, and the client would retry those calls for minutes.
// What was settled since the stop began and not confirmed sent then is
// counted (Stats.Unconfirmed): those messages come again when their ack
// deadline passes. stopCalls ends c.calls. It returns Receive's error.
func (c *Consumer[K, E]) stop(killed bool, core *transport.KeyIntake[K, E, *pubsub.Message], subName string, received <-chan error, stopped bool, stopCalls context.CancelFunc) error {
	closeCtx := c.life.CloseContext()
	if killed {
		stopCalls()
	}
	dctx, cancel := transport.ShutdownContext("pubsub", killed, closeCtx, c.cfg.DrainTimeout)
	before := settledOf(core.Stats())
	left, err := core.Shutdown(dctx)
	cancel()
	if left > 0 || err != nil {
		c.cfg.Logger.Info("ordergen/pubsub: messages not finished when the consumer stopped go back to Pub/Sub", "subscription", subName, "messages", left, "error", err)
	}

	release := transport.GiveUpAfter(closeCtx, c.cfg.DrainTimeout, stopCalls)
	defer release()
	var recvErr error
	if !stopped {
		select {
		case recvErr = <-received: // every acknowledgement and nack sent
		case <-c.calls.Done():
			n := settledOf(core.Stats()) - before
			c.mu.Lock()
			c.unconfirmed += n
			c.mu.Unlock()
			log := c.cfg.Logger.Warn
			if killed {
				log = c.cfg.Logger.Info // as a crash: nothing is waited for
			}
			log("ordergen/pubsub: the client did not send the last acknowledgements in time (Pub/Sub unreachable?): the messages settled while the consumer stopped may come again when their ack deadline passes; close the client to give up its retries",
				"subscription", subName, "unconfirmed", n)
		}
	}
	c.writes.Wait() // their waits end with c.calls
	c.stopDeadLetters()
	return recvErr
}

// settledOf is the number of messages the core acknowledged or nacked.
func settledOf(s transport.KeyStats) uint64 { return s.Finished + s.Unfinished + s.Refused + s.Fenced }

// stopDeadLetters stops the dead-letter publisher, waiting for its
// publishes no longer than c.calls lasts; a publish to an unreachable
// Pub/Sub ends by itself (PublishSettings.Timeout), or when the client
// closes.
func (c *Consumer[K, E]) stopDeadLetters() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.dl.Stop()
	}()
	select {
	case <-done:
	case <-c.calls.Done():
	}
}
