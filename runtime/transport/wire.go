package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/ordergen/ordergen/runtime/durable"
)

// What travels on the wire. Every transport carries an event the same way
// (its key as the broker's key, its type name in HeaderType, the codec's
// encoding as the payload) and sets aside, for the same reasons, a message
// it cannot handle, so that tools reading one broker's dead letters read
// another's.

// Header and attribute names of ordergen's messages.
const (
	// HeaderType names a message's event type, as the codec knows it.
	HeaderType = "ordergen-type"
	// HeaderKey carries a message's ordering key (KeyText), on brokers
	// whose own key is not the event's (RabbitMQ's routing key may be a
	// queue's name).
	HeaderKey = "ordergen-key"

	// HeaderReason is the Reason a message went to a dead-letter
	// destination.
	HeaderReason = "ordergen-dlt-reason"
	// HeaderError is the error text behind the reason.
	HeaderError = "ordergen-dlt-error"
	// HeaderAttempts is how many times a handler tried the event (dead
	// letters of the runtime.SendToDeadLetter policy only).
	HeaderAttempts = "ordergen-dlt-attempts"
)

// Reason says why a message went to a dead-letter destination.
type Reason string

const (
	// ReasonMissingKey: the message has no ordering key.
	ReasonMissingKey Reason = "missing-key"
	// ReasonMissingType: the message names no event type (HeaderType).
	ReasonMissingType Reason = "missing-type"
	// ReasonUnknownType: the codec does not know the event type.
	ReasonUnknownType Reason = "unknown-type"
	// ReasonUndecodable: the payload, or the key, does not decode.
	ReasonUndecodable Reason = "undecodable"
	// ReasonKeyMismatch: the message's key is not its event's key.
	ReasonKeyMismatch Reason = "key-mismatch"
	// ReasonInvalidEvent: the lanes refused the event as invalid
	// (runtime.ErrInvalidEvent: an empty key, a version below 1).
	ReasonInvalidEvent Reason = "invalid-event"
	// ReasonHandlerFailed: a handler failed for good under the
	// runtime.SendToDeadLetter policy (a transport's DeadLetters sink).
	ReasonHandlerFailed Reason = "handler-failed"
	// ReasonMaxDeliveries: the broker delivered the message more often
	// than the consumer allows (runtime/nats's Config.MaxDeliver), which
	// sent it to the dead-letter destination instead of a handler.
	ReasonMaxDeliveries Reason = "max-deliveries"
)

// Reasons returns the reasons a consumer sets a message aside for by what
// it carries: all but ReasonHandlerFailed, which is the engine's, and
// ReasonMaxDeliveries, which comes from the broker's delivery count.
func Reasons() []Reason {
	return []Reason{ReasonMissingKey, ReasonMissingType, ReasonUnknownType, ReasonUndecodable, ReasonKeyMismatch, ReasonInvalidEvent}
}

// Bad is why a message cannot be handled: it goes to the dead-letter
// destination with its reason, and its unit of order goes on.
type Bad struct {
	Reason Reason
	Err    error
}

func (b *Bad) Error() string { return fmt.Sprintf("%s: %v", b.Reason, b.Err) }

// Unwrap returns the error behind the reason.
func (b *Bad) Unwrap() error { return b.Err }

// Header is one header, or attribute, of a message.
type Header struct{ Key, Value string }

// maxErrorText bounds the error text a dead letter carries: brokers bound
// their headers (SQS takes 256 KiB a message, attributes included).
const maxErrorText = 1024

// DeadLetterHeaders returns the headers that say why a message went to a
// dead-letter destination: HeaderReason, HeaderError (err's text, cut at 1
// KiB; empty for nil) and, when attempts is above 0, HeaderAttempts.
func DeadLetterHeaders(reason Reason, err error, attempts int) []Header {
	text := ""
	if err != nil {
		text = err.Error()
	}
	if len(text) > maxErrorText {
		text = text[:maxErrorText]
	}
	hs := []Header{{HeaderReason, string(reason)}, {HeaderError, text}}
	if attempts > 0 {
		hs = append(hs, Header{HeaderAttempts, strconv.Itoa(attempts)})
	}
	return hs
}

// KeyText returns the text form of key (durable.EncodeKey), without
// reflection for a string key: the ordering key on the wire.
func KeyText[K comparable](key K) (string, error) {
	if s, ok := any(key).(string); ok {
		return s, nil
	}
	return durable.EncodeKey(key)
}

// DigestKey is what a broker keys a message by when a key's text is not a
// key it takes (too long, or with characters it refuses): "sha256:" and the
// hex SHA-256 of the text. It is the same in every process and release, as
// a broker key must be, and keys that differ keep differing.
func DigestKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Decoder turns the messages of one entity into its events, or says why a
// message cannot be handled. Its zero value is not usable: Codec is
// required.
type Decoder[K comparable, E Keyed[K]] struct {
	// Codec decodes a payload by its event type.
	Codec durable.Codec[E]
	// KeyOf returns the broker's key of an event's key (Pub/Sub's ordering
	// key, SQS's message group ID), which a message's key must equal. Nil:
	// the key's text form (KeyText), and a broker key that decodes to the
	// event's key in another text ("042" for 42) matches too.
	KeyOf func(K) (string, error)
	// Keyless accepts a message without a broker key (Kafka's
	// AcceptKeyless): it is ordered by its event's key.
	Keyless bool
}

// Decode decodes the payload data of event type typ, from a message whose
// broker key is key (the key the broker ordered it by: a record key, an
// ordering key, a message group ID, HeaderKey). A message without a type
// or a key, with a type the codec does not know, a payload that does not
// decode, or a key that is not its event's, gives the Bad that says so.
func (d Decoder[K, E]) Decode(typ, key string, data []byte) (E, *Bad) {
	return decode(d, typ, key, data)
}

// DecodeBytes is Decode for a broker key in bytes (a Kafka record's),
// which it compares without copying.
func (d Decoder[K, E]) DecodeBytes(typ string, key, data []byte) (E, *Bad) {
	return decode(d, typ, key, data)
}

func decode[K comparable, E Keyed[K], T string | []byte](d Decoder[K, E], typ string, key T, data []byte) (E, *Bad) {
	var zero E
	switch {
	case typ == "":
		return zero, &Bad{ReasonMissingType, errors.New("the message names no event type")}
	case len(key) == 0 && !d.Keyless:
		return zero, &Bad{ReasonMissingKey, errors.New("the message has no key")}
	}
	ev, err := d.Codec.Decode(typ, data)
	switch {
	case errors.Is(err, durable.ErrUnknownEventType):
		return zero, &Bad{ReasonUnknownType, err}
	case err != nil:
		return zero, &Bad{ReasonUndecodable, err}
	}
	if len(key) == 0 {
		return ev, nil
	}
	if bad := match(d, key, ev.EventKey()); bad != nil {
		return zero, bad
	}
	return ev, nil
}

// match checks that a message's broker key is its event's.
func match[K comparable, E Keyed[K], T string | []byte](d Decoder[K, E], key T, want K) *Bad {
	if d.KeyOf != nil {
		text, err := d.KeyOf(want)
		switch {
		case err != nil:
			return &Bad{ReasonUndecodable, err}
		case text != string(key):
			return &Bad{ReasonKeyMismatch, fmt.Errorf("message key %q, event key's %q", key, text)}
		}
		return nil
	}
	// A string key is compared as it is, without decoding it (which,
	// through reflection, costs allocations per message).
	if s, ok := any(want).(string); ok {
		if string(key) != s {
			return &Bad{ReasonKeyMismatch, fmt.Errorf("message key %q, event key %q", key, s)}
		}
		return nil
	}
	got, err := durable.DecodeKey[K](string(key))
	if err != nil {
		return &Bad{ReasonUndecodable, err}
	}
	if got != want {
		text, _ := durable.EncodeKey(want)
		return &Bad{ReasonKeyMismatch, fmt.Errorf("message key %q, event key %q", key, text)}
	}
	return nil
}
