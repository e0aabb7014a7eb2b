package transport

import "time"

// Message is one message a transport received and decoded, as it gives it
// to an intake (StreamIntake, KeyIntake).
type Message[E any, M any] struct {
	// Handle is the transport's handle of the message (a partition and
	// offset, a delivery tag, a receipt), given back to the intake's
	// Settle and DeadLetter.
	Handle M
	// Event is the decoded event, when Bad is nil.
	Event E
	// Bad, when set, says why the message cannot be handled (Decoder's
	// verdict): the intake gives it to DeadLetter instead of the lanes.
	Bad *Bad

	// Key is the broker's unit of order of a KeyIntake's message (the
	// ordering key, the message group ID). A StreamIntake logs it.
	Key string
	// ID is the broker's ID of the message, for logs (and the fence of a
	// KeyIntake).
	ID string
	// Lease is when the broker's hold on a KeyIntake's message ends for
	// good and it may be delivered elsewhere (zero: never); the key's
	// ownership ends before then.
	Lease time.Time
	// Raw is the message as the broker delivered it, when DeadLetter
	// needs more than Handle to write it (a *kgo.Record): the intake keeps
	// it only while the message waits to be offered, so that a message in
	// the lanes does not hold the broker's buffers.
	Raw any
	// Trace is the trace context the message carries (TraceFrom its
	// headers), which the Source links to its event's attempts.
	Trace Trace

	tag uint64 // its tag in the source once taken (StreamIntake)
}

// DeadLetterFunc writes a bad message to the broker's dead-letter
// destination and calls done once with the result: nil once written (the
// message is then settled Finished), the write's error otherwise (settled
// Unfinished: the broker delivers it again). It may call done before it
// returns; it must not block on the broker (write on a goroutine, or
// asynchronously).
type DeadLetterFunc[E any, M any] func(m Message[E, M], done func(error))
