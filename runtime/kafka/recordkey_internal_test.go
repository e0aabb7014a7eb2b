package kafka

import "testing"

// checkRecordKey compares a string key as it is and decodes any other
// key: every kind of key gives the verdict that decoding and comparing
// gives.
func TestCheckRecordKey(t *testing.T) {
	type named string
	cases := []struct {
		name string
		got  *keyMismatch
		want Reason // "" when the key goes with its event
	}{
		{"string, same", checkRecordKey([]byte("k1"), "k1"), ""},
		{"string, other", checkRecordKey([]byte("k2"), "k1"), ReasonKeyMismatch},
		{"string, prefix", checkRecordKey([]byte("k"), "k1"), ReasonKeyMismatch},
		{"named string, same", checkRecordKey([]byte("k1"), named("k1")), ""},
		{"named string, other", checkRecordKey([]byte("k2"), named("k1")), ReasonKeyMismatch},
		{"int, same", checkRecordKey([]byte("42"), 42), ""},
		{"int, same value in other text", checkRecordKey([]byte("042"), 42), ""},
		{"int, other", checkRecordKey([]byte("43"), 42), ReasonKeyMismatch},
		{"int, not a number", checkRecordKey([]byte("x"), 42), ReasonUndecodable},
		{"uint8, out of range", checkRecordKey([]byte("300"), uint8(4)), ReasonUndecodable},
	}
	for _, c := range cases {
		switch {
		case c.want == "" && c.got != nil:
			t.Errorf("%s: %s: %v, want no mismatch", c.name, c.got.reason, c.got.err)
		case c.want != "" && c.got == nil:
			t.Errorf("%s: no mismatch, want %s", c.name, c.want)
		case c.want != "" && c.got.reason != c.want:
			t.Errorf("%s: %s (%v), want %s", c.name, c.got.reason, c.got.err, c.want)
		}
	}
}
