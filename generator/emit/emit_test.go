package emit

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour:               "time.Hour",
		90 * time.Minute:        "90 * time.Minute",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		2 * time.Second:         "2 * time.Second",
		7 * time.Microsecond:    "7 * time.Microsecond",
		1001:                    "time.Duration(1001)",
	} {
		if got := fmt.Sprintf("%#v", duration(d)); got != want {
			t.Errorf("duration(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestReflow(t *testing.T) {
	in := "// A short\n// paragraph.\nx := 1\n\t// " + strings.Repeat("word ", 20) + "\n\t//\tcode stays\n"
	want := "// A short paragraph.\nx := 1\n\t// word word word word word word word word word word word word word word\n\t// word word word word word word\n\t//\tcode stays\n"
	if got := string(reflow([]byte(in))); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
