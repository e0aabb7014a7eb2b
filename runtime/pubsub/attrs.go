package pubsub

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ordergen/ordergen/runtime/durable"
)

// Message attributes. A message carries one event: its ordering key is the
// event's key (OrderingKey), its data the codec's encoding, and AttrType the
// event's type name.
const (
	// AttrType names the message's event type, as the codec knows it.
	AttrType = "ordergen-type"

	// AttrReason is the Reason a message went to the dead-letter topic.
	AttrReason = "ordergen-dlt-reason"
	// AttrError is the error text behind the reason.
	AttrError = "ordergen-dlt-error"
	// AttrSubscription is the subscription the message came from.
	AttrSubscription = "ordergen-dlt-subscription"
	// AttrMessageID is the message's ID there.
	AttrMessageID = "ordergen-dlt-message-id"
	// AttrOrderingKey is its ordering key (dead-letter messages carry
	// none, so that a dead-letter topic need not order).
	AttrOrderingKey = "ordergen-dlt-ordering-key"
	// AttrAttempts is how many times a handler tried the event (dead
	// letters from the runtime.SendToDeadLetter policy only).
	AttrAttempts = "ordergen-dlt-attempts"
)

// Reason says why a message went to the dead-letter topic.
type Reason string

const (
	// ReasonMissingKey: the message has no ordering key.
	ReasonMissingKey Reason = "missing-key"
	// ReasonMissingType: the message has no AttrType attribute.
	ReasonMissingType Reason = "missing-type"
	// ReasonUnknownType: the codec does not know the event type.
	ReasonUnknownType Reason = "unknown-type"
	// ReasonUndecodable: the data does not decode.
	ReasonUndecodable Reason = "undecodable"
	// ReasonKeyMismatch: the ordering key is not its event's key's.
	ReasonKeyMismatch Reason = "key-mismatch"
	// ReasonInvalidEvent: the lanes refused the event as invalid
	// (runtime.ErrInvalidEvent: an empty key, a version below 1).
	ReasonInvalidEvent Reason = "invalid-event"
	// ReasonHandlerFailed: the handler failed for good under the
	// runtime.SendToDeadLetter policy (DeadLetters).
	ReasonHandlerFailed Reason = "handler-failed"
)

// maxOrderingKey is the longest ordering key Pub/Sub takes, in bytes.
const maxOrderingKey = 1024

// OrderingKey returns the ordering key of key's messages:
// durable.EncodeKey's text, or, when that is longer than Pub/Sub allows
// (1024 bytes), "sha256:" and the hex SHA-256 of the text. It fails for a
// key type that is neither a string nor an integer.
func OrderingKey[K comparable](key K) (string, error) {
	text, err := durable.EncodeKey(key)
	if err != nil {
		return "", err
	}
	if len(text) > maxOrderingKey {
		sum := sha256.Sum256([]byte(text))
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	}
	return text, nil
}
