package rabbitmq

// Message headers and properties. A message's body is the codec's
// encoding of its event, its Type property the event type name, its
// HeaderKey header the ordering key (durable.EncodeKey), and its delivery
// mode persistent unless the topology is Transient.
const (
	// HeaderKey carries the message's ordering key.
	HeaderKey = "ordergen-key"
	// HeaderReason is the Reason an event went to the dead-letter
	// exchange through DeadLetters (ReasonHandlerFailed).
	HeaderReason = "ordergen-dlq-reason"
	// HeaderError is the error that sent it there.
	HeaderError = "ordergen-dlq-error"
	// HeaderAttempts is the number of attempts made.
	HeaderAttempts = "ordergen-dlq-attempts"
)

// Reason says why a message went to the dead-letter exchange. The
// consumer rejects a bad message (basic.nack without requeue), so the
// broker dead-letters it with its own x-death header (reason "rejected",
// the queue, the time); the consumer logs and counts the Reason.
type Reason string

const (
	// ReasonMissingType: the message has no Type property.
	ReasonMissingType Reason = "missing-type"
	// ReasonUnknownType: the codec does not know its Type.
	ReasonUnknownType Reason = "unknown-type"
	// ReasonUndecodable: its body does not decode.
	ReasonUndecodable Reason = "undecodable"
	// ReasonMissingKey: it has no HeaderKey header.
	ReasonMissingKey Reason = "missing-key"
	// ReasonKeyMismatch: its HeaderKey is not its event's key.
	ReasonKeyMismatch Reason = "key-mismatch"
	// ReasonInvalidEvent: the target refused the event as invalid.
	ReasonInvalidEvent Reason = "invalid-event"
	// ReasonHandlerFailed: a handler failed for good under the
	// runtime.SendToDeadLetter policy (DeadLetters).
	ReasonHandlerFailed Reason = "handler-failed"
)

var allReasons = []Reason{ReasonMissingType, ReasonUnknownType, ReasonUndecodable, ReasonMissingKey,
	ReasonKeyMismatch, ReasonInvalidEvent}
