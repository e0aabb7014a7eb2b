package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, field, layout string }{
		{"plain text: é, 日本, emoji 🙂, a\\b", "plain text: é, 日本, emoji 🙂, a\\b", "plain text: é, 日本, emoji 🙂, a\\b"},
		{setTitle, `\u001b]0;pwned\u0007`, `\u001b]0;pwned\u0007`},
		{clearScreen + c1CSI, `\u001b[2J\u009b2J`, `\u001b[2J\u009b2J`},
		{"a\tb\nc\rd\x00e\x7f", `a\tb\nc\rd\u0000e\u007f`, "a\tb\nc\\rd\\u0000e\\u007f"},
		{"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029`,
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029`},
		{"x\xffy\xc2", `x\xffy\xc2`, `x\xffy\xc2`},
	} {
		if got := visible(tc.in); got != tc.field {
			t.Errorf("visible(%q) = %q, want %q", tc.in, got, tc.field)
		}
		var b strings.Builder
		if _, err := fmt.Fprint(terminal{&b}, tc.in); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.layout {
			t.Errorf("terminal shows %q as %q, want %q", tc.in, b.String(), tc.layout)
		}
		if a := acting(b.String()); a != "" {
			t.Errorf("terminal lets %s of %q through", a, tc.in)
		}
	}
}

// TestPayloadAsWritten: JSON payloads are shown as their writer meant them,
// without the escapes Go's encoder adds for HTML, and still visible.
func TestPayloadAsWritten(t *testing.T) {
	data, err := json.Marshal(map[string]string{"note": `<b>&amp; "q" \u003c` + c1CSI})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{string(data), `{"note":"<b>&amp; \"q\" \\u003c\u009b2J"}`},
		{"{\n  \"a\": \"\\u003C\\u003E\\u0026\\u2028\",\n  \"b\": [1, 2.50, true]\n}", `{"a":"<>&\u2028","b":[1,2.50,true]}`},
		{"not json " + clearScreen, `"not json \x1b[2J"`},
		{"plain words", "plain words"},
		{"\x00\x01binary", `"\x00\x01binary"`},
	} {
		if got := payload([]byte(tc.in)); got != tc.want {
			t.Errorf("payload(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
