package durable

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/ordergen/ordergen/runtime"
)

// ErrUnknownEventType is wrapped by Codec.Decode for a type name the codec
// does not know (an event from a newer schema, or a foreign record).
var ErrUnknownEventType = errors.New("ordergen: unknown event type")

// Codec turns the events of one entity into bytes and back, for durable park
// stores and transports. The event's type name travels beside its bytes.
// ordergen generates one per entity (JSON, named after the schema's events).
// Implementations must be safe for concurrent use: park stores encode from
// the engine's workers, and transports decode on several goroutines.
type Codec[E any] interface {
	// Encode returns the event's type name and its encoding.
	Encode(event E) (name string, data []byte, err error)
	// Decode rebuilds an event from its type name and encoding. An unknown
	// name gives an error wrapping ErrUnknownEventType; bytes that do not
	// decode give one wrapping ErrInvalidEvent.
	Decode(name string, data []byte) (E, error)
}

// EncodeKey returns the text form of a key whose underlying type is a string
// or an integer: the string itself, or the integer in decimal. Durable stores
// and transports use it.
func EncodeKey[K comparable](key K) (string, error) {
	v := reflect.ValueOf(&key).Elem()
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10), nil
	}
	return "", fmt.Errorf("%w: key type %s is neither a string nor an integer", runtime.ErrInvalidConfig, v.Type())
}

// DecodeKey parses the text form made by EncodeKey. Text that does not fit
// K gives an error wrapping ErrInvalidEvent.
func DecodeKey[K comparable](s string) (K, error) {
	var key K
	v := reflect.ValueOf(&key).Elem()
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return key, fmt.Errorf("%w: key %q is not a %s: %v", runtime.ErrInvalidEvent, s, v.Type(), err)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return key, fmt.Errorf("%w: key %q is not a %s: %v", runtime.ErrInvalidEvent, s, v.Type(), err)
		}
		v.SetUint(n)
	default:
		return key, fmt.Errorf("%w: key type %s is neither a string nor an integer", runtime.ErrInvalidConfig, v.Type())
	}
	return key, nil
}
