package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The README is the front door and docs/ the library behind it; these tests
// keep the first short and the links between them working, since pages and
// headings move and a link that names a moved one fails silently on GitHub.

// readmeMaxLines and readmeSetUpLines bound the README: its length, and the
// lines within which a newcomer finds the commands that run the example and
// the tests.
const (
	readmeMaxLines   = 250
	readmeSetUpLines = 80
)

// TestReadmeIsShort holds the README to its length, with the example's
// command and the test commands in its first lines, and checks that its
// contents list links every page of docs/.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move a topic into its page of docs/", n, readmeMaxLines)
	}
	lines := strings.SplitAfter(text, "\n")
	head := strings.Join(lines[:min(len(lines), readmeSetUpLines)], "")
	for _, want := range []string{"go run ./examples/ledger", "go test -short ./...", "go test -race ./..."} {
		if !strings.Contains(head, want) {
			t.Errorf("the first %d lines of README.md lack %q", readmeSetUpLines, want)
		}
	}
	linked := map[string]bool{}
	for _, l := range docLinks(text) {
		target, _, _ := strings.Cut(l.target, "#")
		linked[path.Clean(target)] = true
	}
	pages, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if page := "docs/" + filepath.Base(p); !linked[page] {
			t.Errorf("README.md does not link %s: its contents list names every page", page)
		}
	}
}

// TestDocLinks checks every relative link of the documentation (README.md,
// CONTRIBUTING.md, docs/): it names a file or folder of the repository and,
// with a #fragment, a heading of that Markdown file.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	anchors := map[string]map[string]bool{} // by file, from the root
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(data))
		return anchors[file]
	}
	for _, doc := range markdownDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range docLinks(string(data)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			target, fragment, hasFragment := strings.Cut(l.target, "#")
			file := doc
			if target != "" {
				file = path.Join(path.Dir(doc), target)
				if strings.HasPrefix(file, "../") {
					t.Errorf("%s:%d: link %q leaves the repository", doc, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", doc, l.line, l.target, file)
					continue
				}
			}
			if !hasFragment {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s:%d: link %q: a fragment of a file that is not Markdown", doc, l.line, l.target)
				continue
			}
			if !anchorsOf(file)[fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", doc, l.line, l.target, file, fragment)
			}
		}
	}
}

// link is a Markdown link of a document: its target and the line it is on.
type link struct {
	target string
	line   int
}

var (
	fencedBlock = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$")
	codeSpan    = regexp.MustCompile("`[^`]*`")
	inlineLink  = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

// blank replaces each match of re in text by spaces, keeping its line
// breaks, so that offsets keep their lines.
func blank(text string, re *regexp.Regexp) string {
	return re.ReplaceAllStringFunc(text, func(m string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, m)
	})
}

// docLinks returns the inline links and images of a Markdown text, but those
// in code (fenced blocks, code spans), which are not links.
func docLinks(text string) []link {
	text = blank(blank(text, fencedBlock), codeSpan)
	var out []link
	for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, link{
			target: text[m[2]:m[3]],
			line:   strings.Count(text[:m[0]], "\n") + 1,
		})
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown
// text: the heading's text, links and code marks taken out, lower-cased,
// without punctuation, spaces made hyphens; a repeated anchor takes -1, -2...
func headingAnchors(text string) map[string]bool {
	text = blank(text, fencedBlock)
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		title = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(title, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// TestHeadingAnchors pins the anchor rule to GitHub's on headings of the
// kinds the documents have.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# Guarantees and policies\n" +
		"## Resync past the resequencer's bound: `on_gap: resync`\n" +
		"## ordergen-parked\n" +
		"```sh\n# not a heading\n```\n" +
		"## The [console](x.md)\n" +
		"## Policies\n## Policies\n")
	for _, want := range []string{"guarantees-and-policies", "resync-past-the-resequencers-bound-on_gap-resync",
		"ordergen-parked", "the-console", "policies", "policies-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block made an anchor: %v", got)
	}
}
