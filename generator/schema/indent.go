package schema

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/diag"
)

// blockProblems are the messages of yaml.v3's parser errors about a block
// mapping or list that meets a line it cannot place: a line indented by
// mistake, most often. yaml.v3 reports them at the line where that mapping
// or list starts, which can be many lines above the mistake.
var blockProblems = []string{
	"did not find expected key",
	"did not find expected '-' indicator",
}

// misplacedLine finds the line that a block problem of yaml.v3 is about,
// and words the problem for it: full is the error of decoding src, problem
// its message without the line, and from the line it names (where the
// mapping or list starts). ok is false when it cannot tell.
//
// yaml.v3 does not say where the parser was when it failed, only where the
// mapping it was reading starts; so misplacedLine decodes the lines of src
// up to the k-th, for the smallest k whose decoding fails with the same
// error: the error needs the line it is about, and the lines after it do
// not change it. The k found by bisection is that line (the lines before it
// decode, or fail otherwise: a flow mapping cut in two, say).
func misplacedLine(src []byte, full, problem string, from int) (diag.Pos, string, bool) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	same := func(k int) bool {
		var doc yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &doc)
		return err != nil && err.Error() == full
	}
	if from < 1 || from > len(lines) || !same(len(lines)) {
		return diag.Pos{}, "", false
	}
	k := from + sort.Search(len(lines)-from+1, func(i int) bool { return same(from + i) })
	if k > len(lines) {
		return diag.Pos{}, "", false
	}
	at, why := explainLine(lines, k)
	if why == "" {
		why = problem
	}
	return at, "yaml syntax error: " + why, true
}

// explainLine returns the position of the first character of line k of
// lines, a document's, and what is wrong with its indentation when it lines
// up with no mapping or list open above it, or "".
func explainLine(lines [][]byte, k int) (diag.Pos, string) {
	line := string(bytes.TrimRight(lines[k-1], "\r\n"))
	indent := len(line) - len(strings.TrimLeft(line, " "))
	return diag.Pos{Line: k, Col: indent + 1}, indentation(bytes.Join(lines[:k-1], nil), indent)
}

// deeperLine words a scanner error of yaml.v3 at line k of src ("mapping
// values are not allowed in this context": a key on a line indented under
// a complete value) as what is wrong with the line's indentation, when that
// is what it is. ok is false when it is not (a value with ": " in it).
func deeperLine(src []byte, k int) (diag.Pos, string, bool) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if k < 1 || k > len(lines) {
		return diag.Pos{}, "", false
	}
	at, why := explainLine(lines, k)
	return at, "yaml syntax error: " + why, why != ""
}

// level is a block mapping or list open at the end of a document: where its
// entries are indented, and what holds it, for messages.
type level struct {
	indent int
	what   string
	line   int // of its last entry
}

// indentation says what is wrong with a line indented by indent spaces that
// follows doc (the lines before it, which decode), when that indentation
// lines it up with no mapping or list open above it: "" when it does (the
// problem is something else).
func indentation(doc []byte, indent int) string {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 {
		return ""
	}
	// The open blocks are those on the path to the last entry of the
	// document: each block mapping or list holds the next as its last value.
	var open []level
	n, what := root.Content[0], "the schema's top level"
	for n != nil && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0 {
		last := n.Content[len(n.Content)-1]
		switch n.Kind {
		case yaml.MappingNode:
			key := n.Content[len(n.Content)-2]
			open = append(open, level{indent: n.Column - 1, what: "the keys of " + what, line: key.Line})
			n, what = last, fmt.Sprintf("%q", key.Value)
		case yaml.SequenceNode:
			open = append(open, level{indent: n.Column - 1, what: "the items of " + what, line: last.Line})
			n, what = last, "an item of "+what
		default:
			n = nil
		}
	}
	var above, below *level // the nearest levels indented less and more
	for i := range open {
		l := &open[i]
		switch {
		case l.indent == indent:
			return ""
		case l.indent < indent && (above == nil || l.indent > above.indent):
			above = l
		case l.indent > indent && (below == nil || l.indent < below.indent):
			below = l
		}
	}
	if below == nil {
		// Deeper than every open block: the value before it is complete
		// (a single value, or a flow mapping), so the line can only be an
		// entry of the innermost block, whose first entry may be the
		// misplaced one.
		if len(open) == 0 {
			return ""
		}
		in := open[len(open)-1]
		return fmt.Sprintf("this line is indented %s, more than %s above it (%s, line %d), whose last value is complete: line them up",
			spaces(indent), in.what, spaces(in.indent), in.line)
	}
	msg := fmt.Sprintf("this line is indented %s, which matches no mapping or list above it: indent it %s, as %s (line %d)",
		spaces(indent), spaces(below.indent), below.what, below.line)
	if above != nil {
		msg += fmt.Sprintf(", or %s, as %s (line %d)", spaces(above.indent), above.what, above.line)
	}
	return msg
}

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}
