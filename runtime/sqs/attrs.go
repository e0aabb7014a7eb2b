package sqs

import (
	"strconv"

	"github.com/ordergen/ordergen/runtime/transport"
)

// A message carries one event: its message group ID is the event's key
// (MessageGroupID), its body the codec's encoding, and its
// transport.HeaderType attribute the event's type name. A message that
// cannot be handled goes to the dead-letter queue with its body and
// attributes, the transport's dead-letter attributes
// (transport.HeaderReason, HeaderError) and these, which say where it came
// from.
const (
	// AttrEncoding is "base64" when the body is the base64 of an encoding
	// that is not text SQS takes (absent otherwise).
	AttrEncoding = "ordergen-encoding"
	// AttrQueue is the queue a dead-lettered message came from.
	AttrQueue = "ordergen-dlt-queue"
	// AttrMessageID is the message's ID there.
	AttrMessageID = "ordergen-dlt-message-id"
)

// maxID is the longest message group and deduplication ID SQS takes.
const maxID = 128

// MessageGroupID returns the message group ID of key's messages:
// durable.EncodeKey's text, or, when that is not an ID SQS takes (longer
// than 128 characters, or with characters other than letters, digits and
// ASCII punctuation), "sha256:" and the hex SHA-256 of the text. It fails
// for a key type that is neither a string nor an integer.
func MessageGroupID[K comparable](key K) (string, error) {
	text, err := transport.KeyText(key)
	if err != nil {
		return "", err
	}
	if len(text) > maxID || !validID(text) {
		return transport.DigestKey(text), nil
	}
	return text, nil
}

// deduplicationID returns the deduplication ID of the event of group
// version version: SQS drops a second message with it for five minutes.
func deduplicationID(group string, version uint64) string {
	id := group + ":" + strconv.FormatUint(version, 10)
	if len(id) > maxID {
		id = transport.DigestKey(group) + ":" + strconv.FormatUint(version, 10)
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
