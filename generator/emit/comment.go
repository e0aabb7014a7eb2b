package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// lineWidth is the width doc comments are wrapped to, a tab counting as four
// columns.
const lineWidth = 80

// Commenter is where a doc comment goes: a *jen.File (its top level) or a
// *jen.Group (the fields of a struct, the methods of an interface, a group
// of constants).
type Commenter interface {
	Comment(text string) *jen.Statement
}

// Doc adds to c the doc comment of the declaration that follows: format,
// formatted with args (fmt.Sprintf), wrapped once, here, to lineWidth
// columns at depth tabs of indentation (0 at the top level, 1 for a struct
// field, an interface method or a constant of a group). It is the one way
// emitters write doc comments.
//
// The text is paragraphs separated by a blank line. The lines of a
// paragraph are joined and rewrapped as one, except a line that starts
// with a space or a tab, which is kept as written: Go doc comments indent
// list items ("  - item") and code ("\tx := 1") that way.
func Doc(c Commenter, depth int, format string, args ...any) {
	text := format
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	c.Comment(Wrap(depth, text))
}

// Wrap returns the lines of the // comment of text, as Doc writes it,
// joined by newlines: for jennifer's PackageComment, which takes the same
// text.
func Wrap(depth int, text string) string {
	width := lineWidth - 4*depth - len("// ")
	var out []string
	var para []string // the words of the paragraph being gathered
	flush := func() {
		out = append(out, fill(para, width)...)
		para = nil
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
			out = append(out, "//")
		case line[0] == ' ' || line[0] == '\t':
			flush()
			out = append(out, strings.TrimRight("// "+line, " "))
		default:
			para = append(para, strings.Fields(line)...)
		}
	}
	flush()
	for i, l := range out {
		if strings.HasPrefix(l, "// \t") {
			out[i] = "//" + l[3:] // gofmt writes code in a comment as //<tab>
		}
	}
	return strings.Join(out, "\n")
}

// fill breaks words into lines of at most width bytes (a longer word has
// a line of its own), each prefixed with "// ".
func fill(words []string, width int) []string {
	var out []string
	var b strings.Builder
	for _, w := range words {
		if b.Len() > 0 && b.Len()+1+len(w) > width {
			out = append(out, "// "+b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	if b.Len() > 0 {
		out = append(out, "// "+b.String())
	}
	return out
}
