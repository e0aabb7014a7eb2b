package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// The README's blocks that a user copies are tested as they are written:
// each carries a mark in the Markdown source, invisible on GitHub, on the
// line before its fence:
//
//	<!-- test FLOW: run -->          a shell block, run with bash -e
//	<!-- test FLOW: file PATH -->    a file the user writes, as PATH
//
// A flow is the blocks of one name, in README order, run in one folder: a
// block's final working directory is where the next one starts.

// step is one marked block of the README.
type step struct {
	line int    // of the fence
	run  bool   // a shell block, else a file
	path string // the file's path, for a file
	text string // the block's contents
}

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

// readmeFlow returns the marked blocks of flow in README.md, in order.
func readmeFlow(t *testing.T, flow string) []step {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		mark, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "<!-- test "+flow+": ")
		if !ok {
			continue
		}
		mark, ok = strings.CutSuffix(mark, " -->")
		if !ok || i+1 >= len(lines) {
			t.Fatalf("README.md:%d: a malformed mark %q", i+1, lines[i])
		}
		fence := lines[i+1]
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		if !strings.HasPrefix(strings.TrimSpace(fence), "```") {
			t.Fatalf("README.md:%d: the mark is not followed by a fenced block", i+1)
		}
		s := step{line: i + 2}
		switch {
		case mark == "run":
			s.run = true
		case strings.HasPrefix(mark, "file "):
			s.path = strings.TrimPrefix(mark, "file ")
		default:
			t.Fatalf("README.md:%d: unknown mark %q", i+1, mark)
		}
		var body []string
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			t.Fatalf("README.md:%d: the block does not end", s.line)
		}
		s.text = strings.Join(body, "\n") + "\n"
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		t.Fatalf("README.md has no block of flow %q", flow)
	}
	return steps
}

// flowRunner runs the steps of a README flow as a user would.
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
		r.t.Fatalf("README.md:%d: the block failed: %v\n%s\n--- the block:\n%s", s.line, err, out, s.text)
	}
	text, pwd, ok := strings.Cut(string(out), strings.TrimPrefix(marker, "\n"))
	if !ok {
		r.t.Fatalf("README.md:%d: no working directory after the block:\n%s", s.line, out)
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
// anything: the flows have the blocks the tests expect, and each block is
// what a user needs (no placeholder left in it).
func TestReadmeFlowsAreMarked(t *testing.T) {
	for flow, want := range map[string][]string{
		"quickstart": {"run", "file schema.yaml", "run", "file fares.go", "file fares_test.go", "run", "run"},
		"published":  {"run", "run"},
		"example":    {"run", "run"},
	} {
		var got []string
		for _, s := range readmeFlow(t, flow) {
			if s.run {
				got = append(got, "run")
			} else {
				got = append(got, "file "+s.path)
			}
			sc := bufio.NewScanner(strings.NewReader(s.text))
			for sc.Scan() {
				if strings.Contains(sc.Text(), "{ ... }") {
					t.Errorf("README.md:%d: the block of flow %s has a placeholder: %q", s.line, flow, sc.Text())
				}
			}
		}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("flow %s: blocks %q, want %q", flow, got, want)
		}
	}
}
