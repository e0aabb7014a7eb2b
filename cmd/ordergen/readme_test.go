package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
)

// The documentation's blocks that a user copies are tested as they are
// written: each carries a mark in the Markdown source, invisible on GitHub,
// on the line before its fence:
//
//	<!-- test FLOW: run -->          a shell block, run with bash -e
//	<!-- test FLOW: file PATH -->    a file the user writes, as PATH
//
// A flow is the blocks of one name, taken from the documents flowDocs lists
// for it, in that order and in each document's order, and run in one
// folder: a block's final working directory is where the next one starts.

// flowDocs lists, for each flow, the documents that hold its blocks, in the
// order the flow runs through them, as paths from the repository's root.
// A flow may cross documents (the README's set-up, then the quick start's
// page, then the operator's tool where it is documented), as a user reading
// them in that order would run them.
var flowDocs = map[string][]string{
	"quickstart": {"README.md", "docs/quickstart.md", "docs/operating.md"},
	"published":  {"docs/quickstart.md", "docs/operating.md"},
	"example":    {"README.md"},
	"tracing":    {"docs/tracing.md"},
}

// step is one marked block of a document.
type step struct {
	file string // the document, from the repository's root
	line int    // of the fence
	run  bool   // a shell block, else a file
	path string // the file's path, for a file
	text string // the block's contents
}

// where returns the block's position, file:line, for messages.
func (s step) where() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// repoRoot returns the root of this checkout.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := goruntime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// markedBlocks returns the marked blocks of every flow in the document doc
// (a path from the repository's root), in order, by flow.
func markedBlocks(t *testing.T, doc string) map[string][]step {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	flows := map[string][]step{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "<!-- test ")
		if !ok {
			continue
		}
		flow, mark, ok := strings.Cut(rest, ": ")
		if ok {
			mark, ok = strings.CutSuffix(mark, " -->")
		}
		if !ok || flow == "" || i+1 >= len(lines) {
			t.Fatalf("%s:%d: a malformed mark %q", doc, i+1, lines[i])
		}
		fence := lines[i+1]
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		if !strings.HasPrefix(strings.TrimSpace(fence), "```") {
			t.Fatalf("%s:%d: the mark is not followed by a fenced block", doc, i+1)
		}
		s := step{file: doc, line: i + 2}
		switch {
		case mark == "run":
			s.run = true
		case strings.HasPrefix(mark, "file "):
			s.path = strings.TrimPrefix(mark, "file ")
		default:
			t.Fatalf("%s:%d: unknown mark %q", doc, i+1, mark)
		}
		var body []string
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			t.Fatalf("%s: the block does not end", s.where())
		}
		s.text = strings.Join(body, "\n") + "\n"
		flows[flow] = append(flows[flow], s)
	}
	return flows
}

// docFlow returns the marked blocks of flow, from the documents flowDocs
// lists for it, in order.
func docFlow(t *testing.T, flow string) []step {
	t.Helper()
	docs, ok := flowDocs[flow]
	if !ok {
		t.Fatalf("no documents listed for flow %q", flow)
	}
	var steps []step
	for _, doc := range docs {
		steps = append(steps, markedBlocks(t, doc)[flow]...)
	}
	if len(steps) == 0 {
		t.Fatalf("%s hold no block of flow %q", strings.Join(docs, ", "), flow)
	}
	return steps
}

// markdownDocs returns the repository's documents that a user or a
// contributor reads, as paths from the repository's root: README.md,
// CONTRIBUTING.md and every Markdown file under docs/.
func markdownDocs(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	docs := []string{"README.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		docs = append(docs, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// flowRunner runs the steps of a flow as a user would.
type flowRunner struct {
	t   *testing.T
	dir string   // where the next step starts
	env []string // the go command's environment
}

// step runs s: a shell block in r.dir (then r.dir is where it ended), or
// a file written into r.dir. It returns a shell block's output.
func (r *flowRunner) step(s step) string {
	r.t.Helper()
	if !s.run {
		path := filepath.Join(r.dir, filepath.FromSlash(s.path))
		if err := os.WriteFile(path, []byte(s.text), 0o644); err != nil {
			r.t.Fatal(err)
		}
		return ""
	}
	const marker = "\n__ordergen_readme_pwd__="
	cmd := exec.Command("bash", "-e", "-c", s.text+"\necho \""+strings.TrimPrefix(marker, "\n")+"$(pwd)\"")
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s: the block failed: %v\n%s\n--- the block:\n%s", s.where(), err, out, s.text)
	}
	text, pwd, ok := strings.Cut(string(out), strings.TrimPrefix(marker, "\n"))
	if !ok {
		r.t.Fatalf("%s: no working directory after the block:\n%s", s.where(), out)
	}
	r.dir = strings.TrimSpace(pwd)
	return text
}

// run runs a command in r.dir and returns its output; it fails the test
// unless the command succeeds.
func (r *flowRunner) run(name string, args ...string) string {
	r.t.Helper()
	out, err := r.try(name, args...)
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// try runs a command in r.dir and returns its output and error.
func (r *flowRunner) try(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestReadmeFlowsAreMarked checks the marks themselves, without running
// anything: the flows have the blocks the tests expect, each block is what
// a user needs (no placeholder left in it), and no document holds a mark
// that its flow does not read (a block moved to another page would no
// longer be run).
func TestReadmeFlowsAreMarked(t *testing.T) {
	for flow, want := range map[string][]string{
		"quickstart": {"run", "file schema.yaml", "run", "file fares.go", "file fares_test.go", "run", "run"},
		"published":  {"run", "run"},
		"example":    {"run", "run"},
		"tracing":    {"run", "file main.go", "run"},
	} {
		var got []string
		for _, s := range docFlow(t, flow) {
			if s.run {
				got = append(got, "run")
			} else {
				got = append(got, "file "+s.path)
			}
			sc := bufio.NewScanner(strings.NewReader(s.text))
			for sc.Scan() {
				if strings.Contains(sc.Text(), "{ ... }") {
					t.Errorf("%s: the block of flow %s has a placeholder: %q", s.where(), flow, sc.Text())
				}
			}
		}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("flow %s: blocks %q, want %q", flow, got, want)
		}
	}
	for _, doc := range markdownDocs(t) {
		for flow, steps := range markedBlocks(t, doc) {
			if !slices.Contains(flowDocs[flow], doc) {
				t.Errorf("%s: a block of flow %q, which reads %q: no test runs it", steps[0].where(), flow, flowDocs[flow])
			}
		}
	}
}
