package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The text this command prints comes mostly from the store: park reasons
// and errors, event names and payloads, keys, namespaces, the results of
// requests. Services wrote it, often from what their senders or brokers
// gave them, so it may hold what a terminal acts on instead of showing:
// ESC ] 0;... sets the window's title, ESC [ 2J clears the screen, C1
// controls do the same in one character, bidi overrides reorder what is
// shown. run passes all the command's output through visible (terminal),
// so that such text is shown, escaped, and never executed; the commands
// pass each field of a table through it as well (visible, oneLine), so
// that a tab or a newline in a field cannot shift columns or forge a line.

// appendVisible appends s to dst with each rune that a terminal would act
// on, or that changes how the runes around it are shown, written as an
// escape: the C0 controls (but tab and newline when layout is set: the
// command's own), DEL and the C1 controls, the bidi controls (U+061C,
// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the line and paragraph
// separators. They are written as in Go and JSON strings (\t, \n, \r,
// \u001b, \u202e), so that an escaped JSON string is still JSON, and bytes
// that are not UTF-8 as \xff. Backslashes are left as they are: the text is
// for reading, and an escape in it was visible already.
func appendVisible(dst []byte, s string, layout bool) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\x`...)
			dst = append(dst, hex[s[i]>>4], hex[s[i]&0xf])
		case layout && (r == '\t' || r == '\n'):
			dst = append(dst, byte(r))
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case acts(r):
			dst = append(dst, `\u`...)
			dst = append(dst, hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

const hex = "0123456789abcdef"

// acts reports whether a terminal acts on r, or shows the runes around it
// otherwise, rather than showing r.
func acts(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// visible returns s as one field of output: every rune that acts escaped,
// tabs and newlines too.
func visible(s string) string {
	if !needsEscape(s, false) {
		return s
	}
	return string(appendVisible(nil, s, false))
}

func needsEscape(s string, layout bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || (acts(r) && !(layout && (r == '\t' || r == '\n'))) {
			return true
		}
	}
	return false
}

// terminal is a writer that shows what it is given, escaped by
// appendVisible but for the tabs and newlines of the command's own layout:
// run wraps the command's standard output and error in it.
type terminal struct{ w io.Writer }

func (t terminal) Write(p []byte) (int, error) {
	s := string(p)
	if !needsEscape(s, true) {
		return t.w.Write(p)
	}
	if _, err := t.w.Write(appendVisible(nil, s, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// visibleList returns names, each visible, separated by commas.
func visibleList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = visible(n)
	}
	return strings.Join(out, ", ")
}

// oneLine keeps a reason or an error on its line, and visible.
func oneLine(s string) string { return visible(strings.Join(strings.Fields(s), " ")) }

// quote quotes a key when it would not read as one word (strconv.Quote
// escapes every rune that acts, as visible does).
func quote(key string) string {
	if key == "" || strings.ContainsAny(key, " \t\n\"'") || strconv.Quote(key) != `"`+key+`"` {
		return strconv.Quote(key)
	}
	return key
}

// payload returns an event's encoding for one line of output. JSON, which
// the generated codecs write, is shown as written: compacted, with the
// escapes of <, > and & that Go's encoder adds for HTML turned back into
// those characters, then visible. Other text is shown as it is when
// nothing in it acts, and as a quoted Go string otherwise.
func payload(data []byte) string {
	var compact bytes.Buffer
	if json.Valid(data) && json.Compact(&compact, data) == nil {
		return visible(string(unescapeHTML(compact.Bytes())))
	}
	s := string(data)
	if !needsEscape(s, false) {
		return s
	}
	return strconv.Quote(s)
}

// unescapeHTML returns the valid JSON text data with \u003c, \u003e and
// \u0026 in its strings written as <, > and &: the same JSON, as its
// writer meant it.
func unescapeHTML(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if data[i+1] == 'u' { // valid JSON: four hex digits follow
				if ch, ok := htmlEscape(data[i+2 : i+6]); ok {
					out = append(out, ch)
					i += 5
					continue
				}
			}
			out = append(out, c, data[i+1]) // the escape's first two bytes, \" and \\ among them
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// htmlEscape returns the character of a \u escape's four hex digits when
// it is one that Go's JSON encoder escapes for HTML.
func htmlEscape(digits []byte) (byte, bool) {
	switch strings.ToLower(string(digits)) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	}
	return 0, false
}
