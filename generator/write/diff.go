package write

import (
	"fmt"
	"strings"
)

const context = 3

// Unified renders the changes as one unified diff: a/ is what is on disk,
// b/ what is generated, each followed by the change's name (an absolute
// name has no prefix); a missing file is diffed against /dev/null, and so
// is an extra one.
func Unified(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		from, to := "a/"+c.Name, "b/"+c.Name
		if strings.HasPrefix(c.Name, "/") {
			from, to = c.Name, c.Name
		}
		switch c.Kind {
		case Missing:
			from = "/dev/null"
		case Extra:
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		b.WriteString(diffLines(splitLines(string(c.Old)), splitLines(string(c.New))))
	}
	return b.String()
}

// splitLines splits s into lines, each with its newline (the last may
// lack one).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// op is one line of an edit script: ' ' kept, '-' removed, '+' added.
type op struct {
	kind byte
	line string
}

// script returns an edit script from a to b, a longest common subsequence
// computed on what remains once the common prefix and suffix are set aside.
func script(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
	w := len(mb) + 1
	lcs := make([]int32, (len(ma)+1)*w)
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	ops := make([]op, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	i, j := 0, 0
	for i < len(ma) || j < len(mb) {
		switch {
		case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
			ops = append(ops, op{' ', ma[i]})
			i++
			j++
		case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, op{'-', ma[i]})
			i++
		default:
			ops = append(ops, op{'+', mb[j]})
			j++
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

// diffLines renders the hunks of the diff from a to b.
func diffLines(a, b []string) string {
	ops := script(a, b)
	var out strings.Builder
	// Lines before ops[k] in a and b.
	ai := make([]int, len(ops)+1)
	bi := make([]int, len(ops)+1)
	for k, o := range ops {
		ai[k+1], bi[k+1] = ai[k], bi[k]
		if o.kind != '+' {
			ai[k+1]++
		}
		if o.kind != '-' {
			bi[k+1]++
		}
	}
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from context lines before the change to context lines
		// after the last change that is within 2*context of the previous.
		start := max(0, k-context)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(run, end+context)
				break
			}
			end = run
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ai[start], ai[end]-ai[start]), hunkRange(bi[start], bi[end]-bi[start]))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return out.String()
}

// hunkRange formats a hunk's line range: start is 0-based.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
