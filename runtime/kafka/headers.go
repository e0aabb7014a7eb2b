package kafka

// Record headers. A record carries one event: its key is the ordering key
// (durable.EncodeKey of the event's key), its value the codec's encoding,
// and HeaderType the event's type name.
const (
	// HeaderType names the record's event type, as the codec knows it.
	HeaderType = "ordergen-type"

	// HeaderReason is the Reason a record went to the dead-letter topic.
	HeaderReason = "ordergen-dlt-reason"
	// HeaderError is the error text behind the reason.
	HeaderError = "ordergen-dlt-error"
	// HeaderTopic is the topic the record came from.
	HeaderTopic = "ordergen-dlt-topic"
	// HeaderPartition is its partition, in decimal.
	HeaderPartition = "ordergen-dlt-partition"
	// HeaderOffset is its offset, in decimal.
	HeaderOffset = "ordergen-dlt-offset"
	// HeaderGroup is the consumer group that gave up on it.
	HeaderGroup = "ordergen-dlt-group"
	// HeaderAttempts is how many times a handler tried the event (dead
	// letters from the runtime.SendToDeadLetter policy only).
	HeaderAttempts = "ordergen-dlt-attempts"
)

// Reason says why a record went to the dead-letter topic. A dead-lettered
// record keeps its key, value and headers; the HeaderReason, HeaderError,
// HeaderTopic, HeaderPartition, HeaderOffset and HeaderGroup headers are
// added.
type Reason string

const (
	// ReasonMissingKey: the record has no key (see Config.AcceptKeyless).
	ReasonMissingKey Reason = "missing-key"
	// ReasonMissingType: the record has no HeaderType header.
	ReasonMissingType Reason = "missing-type"
	// ReasonUnknownType: the codec does not know the event type.
	ReasonUnknownType Reason = "unknown-type"
	// ReasonUndecodable: the value or the key does not decode.
	ReasonUndecodable Reason = "undecodable"
	// ReasonKeyMismatch: the record's key is not its event's key.
	ReasonKeyMismatch Reason = "key-mismatch"
	// ReasonInvalidEvent: the lanes refused the event as invalid
	// (runtime.ErrInvalidEvent: an empty key, a version below 1).
	ReasonInvalidEvent Reason = "invalid-event"
	// ReasonHandlerFailed: the handler failed for good under the
	// runtime.SendToDeadLetter policy (DeadLetters).
	ReasonHandlerFailed Reason = "handler-failed"
)

// allReasons are the reasons the consumer dead-letters records for.
var allReasons = [...]Reason{ReasonMissingKey, ReasonMissingType, ReasonUnknownType, ReasonUndecodable, ReasonKeyMismatch, ReasonInvalidEvent}
