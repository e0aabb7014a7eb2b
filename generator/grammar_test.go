package generator

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// articleBeforeName finds "a" or "an" before a Go name in a comment: a
// qualified or mixed-case identifier, as generated comments write them.
var articleBeforeName = regexp.MustCompile(`\b([Aa]n?) ([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?)\b`)

// TestGeneratedCommentsUseTheRightArticle checks every comment of every
// golden output: "an" before a name that starts with a vowel letter ("an
// AccountHandler"), "a" before any other ("a ledger.AccountHandler", "a
// RiderDispatcher"), whatever the entity is called.
func TestGeneratedCommentsUseTheRightArticle(t *testing.T) {
	checked := 0
	for _, c := range loadGolden(t) {
		for _, f := range output(t, c) {
			if !strings.HasSuffix(f.Name, ".go") {
				continue
			}
			for i, line := range bytes.Split(f.Data, []byte("\n")) {
				text, ok := bytes.CutPrefix(bytes.TrimLeft(line, "\t"), []byte("//"))
				if !ok {
					continue
				}
				for _, m := range articleBeforeName.FindAllSubmatch(text, -1) {
					name := string(m[2])
					if !isGoName(name) {
						continue // an English word
					}
					checked++
					want := "a"
					if strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
						want = "an"
					}
					if got := strings.ToLower(string(m[1])); got != want {
						t.Errorf("%s/%s:%d: %q: want %q before %s", c.name, f.Name, i+1, strings.TrimSpace(string(line)), want, name)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no article before a Go name found: the test checks nothing")
	}
}

// isGoName reports whether w is written as a Go name rather than a word:
// qualified, or with an upper-case letter after the first.
func isGoName(w string) bool {
	return strings.Contains(w, ".") || strings.ToLower(w[1:]) != w[1:]
}
