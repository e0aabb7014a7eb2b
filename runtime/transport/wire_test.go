package transport_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// wev is an event whose key type the test picks.
type wev[K comparable] struct{ K K }

func (e wev[K]) EventKey() K { return e.K }

// wcodec decodes "<key>" of type "ev" into a wev, and refuses "{".
type wcodec[K comparable] struct{}

func (wcodec[K]) Encode(e wev[K]) (string, []byte, error) {
	s, err := transport.KeyText(e.K)
	return "ev", []byte(s), err
}

func (wcodec[K]) Decode(name string, data []byte) (wev[K], error) {
	switch {
	case name != "ev":
		return wev[K]{}, fmt.Errorf("%w: %s", durable.ErrUnknownEventType, name)
	case string(data) == "{":
		return wev[K]{}, errors.New("not an event")
	}
	k, err := durable.DecodeKey[K](string(data))
	return wev[K]{k}, err
}

// decodeCase is one message and the reason the decoder must give it ("":
// none).
type decodeCase struct {
	name           string
	typ, key, data string
	want           transport.Reason
}

func checkDecode[K comparable](t *testing.T, d transport.Decoder[K, wev[K]], cases []decodeCase) {
	t.Helper()
	for _, c := range cases {
		for _, bytes := range []bool{false, true} {
			var bad *transport.Bad
			if bytes {
				_, bad = d.DecodeBytes(c.typ, []byte(c.key), []byte(c.data))
			} else {
				_, bad = d.Decode(c.typ, c.key, []byte(c.data))
			}
			switch {
			case c.want == "" && bad != nil:
				t.Errorf("%s (bytes %v): %v, want none", c.name, bytes, bad)
			case c.want != "" && bad == nil:
				t.Errorf("%s (bytes %v): no reason, want %s", c.name, bytes, c.want)
			case c.want != "" && bad.Reason != c.want:
				t.Errorf("%s (bytes %v): %v, want %s", c.name, bytes, bad, c.want)
			}
		}
	}
}

// The decoder gives each kind of bad message its reason; a string key is
// compared as it is, any other key decoded and compared, so that every
// kind of key gives the verdict that decoding and comparing gives.
func TestDecoderReasons(t *testing.T) {
	type named string
	checkDecode(t, transport.Decoder[string, wev[string]]{Codec: wcodec[string]{}}, []decodeCase{
		{"good", "ev", "k1", "k1", ""},
		{"no type", "", "k1", "k1", transport.ReasonMissingType},
		{"no key", "ev", "", "k1", transport.ReasonMissingKey},
		{"unknown type", "other", "k1", "k1", transport.ReasonUnknownType},
		{"undecodable", "ev", "k1", "{", transport.ReasonUndecodable},
		{"other key", "ev", "k2", "k1", transport.ReasonKeyMismatch},
		{"prefix", "ev", "k", "k1", transport.ReasonKeyMismatch},
	})
	checkDecode(t, transport.Decoder[named, wev[named]]{Codec: wcodec[named]{}}, []decodeCase{
		{"named string, same", "ev", "k1", "k1", ""},
		{"named string, other", "ev", "k2", "k1", transport.ReasonKeyMismatch},
	})
	checkDecode(t, transport.Decoder[int, wev[int]]{Codec: wcodec[int]{}}, []decodeCase{
		{"int, same", "ev", "42", "42", ""},
		{"int, same value in other text", "ev", "042", "42", ""},
		{"int, other", "ev", "43", "42", transport.ReasonKeyMismatch},
		{"int, not a number", "ev", "x", "42", transport.ReasonUndecodable},
	})
	checkDecode(t, transport.Decoder[uint8, wev[uint8]]{Codec: wcodec[uint8]{}}, []decodeCase{
		{"uint8, out of range", "ev", "300", "4", transport.ReasonUndecodable},
	})
	// A broker key of its own (a hash for long keys) must be the event's
	// exactly; a keyless decoder takes a message without one.
	hashed := func(k string) (string, error) { return "h:" + k, nil }
	checkDecode(t, transport.Decoder[string, wev[string]]{Codec: wcodec[string]{}, KeyOf: hashed}, []decodeCase{
		{"KeyOf, same", "ev", "h:k1", "k1", ""},
		{"KeyOf, the plain key", "ev", "k1", "k1", transport.ReasonKeyMismatch},
	})
	checkDecode(t, transport.Decoder[string, wev[string]]{Codec: wcodec[string]{}, Keyless: true}, []decodeCase{
		{"keyless", "ev", "", "k1", ""},
		{"keyless, other key", "ev", "k2", "k1", transport.ReasonKeyMismatch},
	})
}

// A dead letter says why, with the error's text cut at 1 KiB, and how many
// attempts the handler made when it made any.
func TestDeadLetterHeaders(t *testing.T) {
	hs := transport.DeadLetterHeaders(transport.ReasonUndecodable, errors.New(strings.Repeat("x", 5000)), 0)
	got := map[string]string{}
	for _, h := range hs {
		got[h.Key] = h.Value
	}
	if got[transport.HeaderReason] != "undecodable" || len(got[transport.HeaderError]) != 1024 || len(hs) != 2 {
		t.Errorf("headers %v: want the reason, 1 KiB of error and nothing else", got)
	}
	hs = transport.DeadLetterHeaders(transport.ReasonHandlerFailed, nil, 3)
	if len(hs) != 3 || hs[1].Value != "" || hs[2] != (transport.Header{Key: transport.HeaderAttempts, Value: "3"}) {
		t.Errorf("headers %v: want an empty error and 3 attempts", hs)
	}
}

// A digest is the SHA-256 of the key's text (FIPS 180-2's example for
// "abc"), so that every process and release keys a message alike.
func TestDigestKey(t *testing.T) {
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := transport.DigestKey("abc"); got != want {
		t.Errorf("DigestKey(abc) = %s, want %s", got, want)
	}
	if transport.DigestKey("abd") == transport.DigestKey("abc") {
		t.Error("two keys got one digest")
	}
}
