package rabbitmq

import (
	"slices"
)

// Acknowledgements, and why they look like this.
//
// A queue acknowledges per message (basic.ack of one delivery tag), or
// every unacknowledged delivery up to a tag at once (multiple). Outcomes
// come in any order: keys run in parallel, and a report may come after its
// key's next event began. Three facts shape the rule:
//
//   - Prefetch counts unacknowledged deliveries. Acknowledging only a
//     contiguous prefix (a Kafka-style commit) would let one slow or parked
//     message at the head hold the whole prefetch, and every key of the
//     queue would wait behind it. So every finished message is
//     acknowledged at once, on its own if need be: a slow key holds only
//     its own deliveries' room.
//   - A multiple ack takes every unacknowledged delivery up to its tag,
//     finished or not. So it is used only for a run of finished deliveries
//     with no unfinished one below its end; past the lowest unfinished
//     delivery each finished one is acknowledged singly. (It must also end
//     on a delivery not acknowledged yet: the broker closes the channel on
//     an unknown tag.)
//   - Messages that do not finish here (withdrawn when the consumer closes
//     or loses the queue, never offered, running at a kill) are never
//     returned one by one while the channel consumes: a message requeued
//     while later messages of its key are still held here would be
//     delivered again behind them. They are returned all at once, in their
//     original order, when the channel closes: the broker puts a closed
//     channel's unacknowledged messages back at their places in the queue
//     before the next consumer (single active consumer) gets any, so a
//     key's messages come back in order.
//
// A bad message is rejected (basic.nack, no requeue): the broker moves it
// to the queue's dead-letter exchange. Rejects and acks go out in tag
// order on the channel, so a multiple ack never passes over a reject that
// has not been sent.
//
// What an acknowledgement lost with its channel costs: the broker delivers
// the message again to the next consumer, whose version guard skips it.
// A key's finished messages are not always acknowledged in order (a report
// can come late), so after a crash an older finished message can come
// back after a newer one was applied: again the guard skips it.

// ackState is the state of one delivery.
type ackState uint8

const (
	delivered ackState = iota // not settled: held, running, parked or not offered
	toAck                     // finished: to acknowledge
	toReject                  // bad: to reject to the dead-letter exchange
)

// ledger is the acknowledgement state of one channel's deliveries: the
// deliveries not acknowledged or rejected yet, by tag. It is not safe for
// concurrent use (its queue's lock guards it).
type ledger struct {
	open    map[uint64]ackState // every delivery not sent yet
	pending int                 // of which toAck or toReject
}

func newLedger() *ledger { return &ledger{open: map[uint64]ackState{}} }

// deliver records a delivery.
func (l *ledger) deliver(tag uint64) { l.open[tag] = delivered }

// settle marks a delivered message to acknowledge (reject false) or to
// reject. A tag that is not open (sent already, or of an earlier channel)
// is ignored.
func (l *ledger) settle(tag uint64, reject bool) bool {
	if st, ok := l.open[tag]; !ok || st != delivered {
		return false
	}
	if reject {
		l.open[tag] = toReject
	} else {
		l.open[tag] = toAck
	}
	l.pending++
	return true
}

// unsettled returns the number of deliveries neither acknowledged nor
// rejected (sent or to send): what the prefetch counts.
func (l *ledger) unsettled() int { return len(l.open) }

// frame is one acknowledgement to send.
type frame struct {
	tag      uint64
	multiple bool // ack every unacknowledged delivery up to tag
	reject   bool // nack without requeue
}

// take returns the frames that send every pending settlement, in tag
// order, and forgets those deliveries: the finished ones below the lowest
// unsettled delivery as multiple acks (split around rejects), the others
// singly.
func (l *ledger) take() []frame {
	if l.pending == 0 {
		return nil
	}
	var low uint64 // lowest delivered (unsettled) tag; 0: none
	var tags []uint64
	for tag, st := range l.open {
		if st == delivered {
			if low == 0 || tag < low {
				low = tag
			}
			continue
		}
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	out := make([]frame, 0, len(tags))
	run, runLen := uint64(0), 0 // the last tag and the size of a multiple ack being gathered
	flush := func() {
		if runLen > 0 {
			out = append(out, frame{tag: run, multiple: runLen > 1})
			run, runLen = 0, 0
		}
	}
	for _, tag := range tags {
		switch {
		case l.open[tag] == toReject:
			flush()
			out = append(out, frame{tag: tag, reject: true})
		case low == 0 || tag < low:
			run = tag
			runLen++
		default:
			flush()
			out = append(out, frame{tag: tag})
		}
		delete(l.open, tag)
	}
	flush()
	l.pending = 0
	return out
}
