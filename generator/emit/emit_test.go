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

// TestWrap checks that a paragraph is wrapped once to the width left at
// its depth, and that the lines of a list or of code are kept as written,
// not joined into the paragraph.
func TestWrap(t *testing.T) {
	for _, c := range []struct {
		depth      int
		text, want string
	}{
		{0, "A short\nparagraph.", "// A short paragraph."},
		{1, strings.Repeat("word ", 20), "// word word word word word word word word word word word word word word\n// word word word word word word"},
		{0, "Steps:\n  - one\n  - two\n\nThen:\n\tcode stays", "// Steps:\n//   - one\n//   - two\n//\n// Then:\n//\tcode stays"},
	} {
		if got := Wrap(c.depth, c.text); got != c.want {
			t.Errorf("Wrap(%d, %q):\n%s\nwant:\n%s", c.depth, c.text, got, c.want)
		}
	}
}
