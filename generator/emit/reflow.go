package emit

import (
	"bytes"
	"strings"
)

// lineWidth is the width comments are wrapped to, a tab counting as four
// columns.
const lineWidth = 80

// reflow rewraps every block of consecutive // comment lines of one
// indentation as one paragraph that fits lineWidth. The emitter writes doc
// comments in pieces; this makes them read as prose. Lines of a block that
// start with a tab after the slashes (code in a comment) are kept as they
// are.
func reflow(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	var out []string
	for i := 0; i < len(lines); {
		indent, text, ok := commentLine(lines[i])
		if !ok {
			out = append(out, lines[i])
			i++
			continue
		}
		words := strings.Fields(text)
		j := i + 1
		for ; j < len(lines); j++ {
			ind, t, ok := commentLine(lines[j])
			if !ok || ind != indent {
				break
			}
			words = append(words, strings.Fields(t)...)
		}
		out = append(out, wrap(indent, words)...)
		i = j
	}
	return []byte(strings.Join(out, "\n"))
}

// commentLine splits a line "<tabs>// text" into its indentation and text.
func commentLine(line string) (indent, text string, ok bool) {
	trimmed := strings.TrimLeft(line, "\t")
	if !strings.HasPrefix(trimmed, "// ") || strings.HasPrefix(trimmed, "//\t") {
		return "", "", false
	}
	return line[:len(line)-len(trimmed)], trimmed[3:], true
}

func wrap(indent string, words []string) []string {
	width := lineWidth - 4*len(indent) - 3
	var out []string
	var b bytes.Buffer
	for _, w := range words {
		if b.Len() > 0 && b.Len()+1+len(w) > width {
			out = append(out, indent+"// "+b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	if b.Len() > 0 {
		out = append(out, indent+"// "+b.String())
	}
	return out
}
