package console

import (
	"testing"
	"time"
)

func TestPrettyWritesHTMLCharactersAsThemselves(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"\u003cb\u003e \u0026"}`: "{\n  \"a\": \"<b> &\"\n}",
		`{"a":"\\u003c"}`:              "{\n  \"a\": \"\\\\u003c\"\n}", // an escaped backslash, then text
		`{"a":"\u00e9\u003c"}`:         "{\n  \"a\": \"\\u00e9<\"\n}",
		`not json <b>`:                 `not json <b>`,
	} {
		if got := pretty([]byte(in)); got != want {
			t.Errorf("pretty(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestAgeAndNum(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:        "850ms",
		12340 * time.Millisecond:      "12.3s",
		4*time.Minute + 5*time.Second: "4m05s",
		2*time.Hour + 10*time.Minute:  "2h10m",
		76 * time.Hour:                "3d4h",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
	for v, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := num(v); got != want {
			t.Errorf("num(%d) = %q, want %q", v, got, want)
		}
	}
}
