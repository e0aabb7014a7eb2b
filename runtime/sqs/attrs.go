package sqs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/ordergen/ordergen/runtime/durable"
)

// Message attributes. A message carries one event: its message group ID is
// the event's key (MessageGroupID), its body the codec's encoding, and
// AttrType the event's type name.
const (
	// AttrType names the message's event type, as the codec knows it.
	AttrType = "ordergen-type"
	// AttrEncoding is "base64" when the body is the base64 of an encoding
	// that is not text SQS takes (absent otherwise).
	AttrEncoding = "ordergen-encoding"

	// AttrReason is the Reason a message went to the dead-letter queue.
	AttrReason = "ordergen-dlt-reason"
	// AttrError is the error text behind the reason.
	AttrError = "ordergen-dlt-error"
	// AttrQueue is the queue the message came from.
	AttrQueue = "ordergen-dlt-queue"
	// AttrMessageID is the message's ID there.
	AttrMessageID = "ordergen-dlt-message-id"
	// AttrAttempts is how many times a handler tried the event (dead
	// letters from the runtime.SendToDeadLetter policy only).
	AttrAttempts = "ordergen-dlt-attempts"
)

// Reason says why a message went to the dead-letter queue.
type Reason string

const (
	// ReasonMissingKey: the message has no message group ID.
	ReasonMissingKey Reason = "missing-key"
	// ReasonMissingType: the message has no AttrType attribute.
	ReasonMissingType Reason = "missing-type"
	// ReasonUnknownType: the codec does not know the event type.
	ReasonUnknownType Reason = "unknown-type"
	// ReasonUndecodable: the body does not decode.
	ReasonUndecodable Reason = "undecodable"
	// ReasonKeyMismatch: the message group ID is not its event's key's.
	ReasonKeyMismatch Reason = "key-mismatch"
	// ReasonInvalidEvent: the lanes refused the event as invalid
	// (runtime.ErrInvalidEvent: an empty key, a version below 1).
	ReasonInvalidEvent Reason = "invalid-event"
	// ReasonHandlerFailed: the handler failed for good under the
	// runtime.SendToDeadLetter policy (DeadLetters).
	ReasonHandlerFailed Reason = "handler-failed"
)

// maxID is the longest message group and deduplication ID SQS takes.
const maxID = 128

// MessageGroupID returns the message group ID of key's messages:
// durable.EncodeKey's text, or, when that is not an ID SQS takes (longer
// than 128 characters, or with characters other than letters, digits and
// ASCII punctuation), "sha256:" and the hex SHA-256 of the text. It fails
// for a key type that is neither a string nor an integer.
func MessageGroupID[K comparable](key K) (string, error) {
	text, err := durable.EncodeKey(key)
	if err != nil {
		return "", err
	}
	if len(text) > maxID || !validID(text) {
		sum := sha256.Sum256([]byte(text))
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	}
	return text, nil
}

// deduplicationID returns the deduplication ID of the event of group
// version version: SQS drops a second message with it for five minutes.
func deduplicationID(group string, version uint64) string {
	id := group + ":" + strconv.FormatUint(version, 10)
	if len(id) > maxID {
		sum := sha256.Sum256([]byte(group))
		id = "sha256:" + hex.EncodeToString(sum[:]) + ":" + strconv.FormatUint(version, 10)
	}
	return id
}

// validID reports whether s is made of the characters SQS takes in group
// and deduplication IDs: letters, digits and ASCII punctuation.
func validID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
