package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a position in the schema: 1-based line and column. The zero Pos
// means "no position" and is reported as 1:1.
type Pos struct {
	// Line is the 1-based line.
	Line int
	// Col is the 1-based column, in bytes.
	Col int
}

// Diagnostic is one error found in a schema.
type Diagnostic struct {
	// Pos is where the problem is.
	Pos Pos
	// Msg says what the problem is.
	Msg string
}

// String formats d without a path, as line:col: message.
func (d Diagnostic) String() string {
	line, col := d.Pos.Line, d.Pos.Col
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	return fmt.Sprintf("%d:%d: %s", line, col, d.Msg)
}

// List collects diagnostics. The zero List is empty and ready to use.
type List struct {
	items []Diagnostic
}

// Add records a diagnostic at pos.
func (l *List) Add(pos Pos, format string, args ...any) {
	l.items = append(l.items, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Append records every diagnostic of other.
func (l *List) Append(other List) {
	l.items = append(l.items, other.items...)
}

// Len returns the number of diagnostics.
func (l *List) Len() int { return len(l.items) }

// Items returns the diagnostics sorted by line, column and message, with
// exact duplicates removed.
func (l *List) Items() []Diagnostic {
	items := slices.Clone(l.items)
	slices.SortStableFunc(items, func(a, b Diagnostic) int {
		if c := cmp.Compare(a.Pos.Line, b.Pos.Line); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Pos.Col, b.Pos.Col); c != 0 {
			return c
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	return slices.Compact(items)
}

// Format returns every diagnostic as path:line:col: message, one per line,
// sorted, each line ending in a newline.
func (l *List) Format(path string) string {
	var b strings.Builder
	for _, d := range l.Items() {
		b.WriteString(path)
		b.WriteByte(':')
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Error is a non-empty List used as an error value. Its message is the
// formatted list.
type Error struct {
	// Path is the schema's path, the prefix of every line.
	Path string
	// List holds the diagnostics.
	List List
}

// Error implements error.
func (e *Error) Error() string {
	return strings.TrimSuffix(e.List.Format(e.Path), "\n")
}
