package pubsub

import "github.com/ordergen/ordergen/runtime/transport"

// A message carries one event: its ordering key is the event's key
// (OrderingKey), its data the codec's encoding, and its transport.HeaderType
// attribute the event's type name. A message that cannot be handled goes to
// the dead-letter topic with its data and attributes, the transport's
// dead-letter attributes (transport.HeaderReason, HeaderError) and these,
// which say where it came from.
const (
	// AttrSubscription is the subscription a dead-lettered message came
	// from.
	AttrSubscription = "ordergen-dlt-subscription"
	// AttrMessageID is the message's ID there.
	AttrMessageID = "ordergen-dlt-message-id"
	// AttrOrderingKey is its ordering key (dead-letter messages carry
	// none, so that a dead-letter topic need not order).
	AttrOrderingKey = "ordergen-dlt-ordering-key"
)

// maxOrderingKey is the longest ordering key Pub/Sub takes, in bytes.
const maxOrderingKey = 1024

// OrderingKey returns the ordering key of key's messages:
// durable.EncodeKey's text, or, when that is longer than Pub/Sub allows
// (1024 bytes), "sha256:" and the hex SHA-256 of the text. It fails for a
// key type that is neither a string nor an integer.
func OrderingKey[K comparable](key K) (string, error) {
	text, err := transport.KeyText(key)
	if err != nil {
		return "", err
	}
	if len(text) > maxOrderingKey {
		return transport.DigestKey(text), nil
	}
	return text, nil
}
