package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a new user meets in a module of their own, through the binary: the
// paths in messages and diffs are the ones they typed, the command they are
// told to run is the one they use, and docs writes where it is told.

// newModule returns a new folder holding a go.mod of module example.com/svc.
func newModule(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "svc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/svc\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInitSaysWhatGoGenerateNeedsThroughTheBinary(t *testing.T) {
	dir := newModule(t)
	code, stdout, stderr := runBinary(t, dir, "init", "-package", "rides")
	if code != 0 || !strings.Contains(stdout, "wrote schema.yaml and generate.go") {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	gen, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	if err != nil || !strings.Contains(string(gen), "\n//go:generate go tool ordergen generate schema.yaml\n") {
		t.Errorf("generate.go does not run go tool ordergen, as the README does (%v):\n%s", err, gen)
	}
	want := "ordergen: note: go.mod declares no tool github.com/ordergen/ordergen/cmd/ordergen, which go generate runs as go tool ordergen: run go get -tool github.com/ordergen/ordergen/cmd/ordergen\n"
	if stderr != want {
		t.Errorf("init in a module without the tool:\nstderr %q\nwant   %q", stderr, want)
	}
	// With the tool declared, init has nothing to add.
	other := newModule(t)
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/svc\n\ngo 1.26\n\ntool github.com/ordergen/ordergen/cmd/ordergen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runBinary(t, other, "init"); code != 0 || stderr != "" {
		t.Errorf("init in a module with the tool: exit %d, stderr %q", code, stderr)
	}
}

func TestCheckSpeaksInTheUsersPathsThroughTheBinary(t *testing.T) {
	dir := newModule(t)
	if code, _, stderr := runBinary(t, dir, "init", "-package", "rides"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	if code, _, stderr := runBinary(t, dir, "generate", "schema.yaml"); code != 0 {
		t.Fatalf("generate: %s", stderr)
	}
	events := filepath.Join(dir, "rides", "events.go")
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, []byte(strings.Replace(string(b), "Owner string", "Owner []byte", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// In the module's folder, where go generate ./... regenerates it.
	code, stdout, stderr := runBinary(t, dir, "check", "schema.yaml")
	if code != 1 || !strings.HasPrefix(stdout, "--- a/rides/events.go\n+++ b/rides/events.go\n") ||
		stderr != "ordergen: rides is stale (run go generate ./...):\n  changed rides/events.go\n" {
		t.Errorf("check in the module: exit %d\nstdout:\n%.200s\nstderr:\n%s", code, stdout, stderr)
	}
	// From the folder above: the paths and the command say where.
	code, stdout, stderr = runBinary(t, filepath.Dir(dir), "check", "svc/schema.yaml")
	if code != 1 || !strings.HasPrefix(stdout, "--- a/svc/rides/events.go\n+++ b/svc/rides/events.go\n") ||
		stderr != "ordergen: svc/rides is stale (run go generate ./svc):\n  changed svc/rides/events.go\n" {
		t.Errorf("check from above: exit %d\nstdout:\n%.200s\nstderr:\n%s", code, stdout, stderr)
	}
	// Without a go:generate line, the command that regenerates is ordergen's own.
	if err := os.Remove(filepath.Join(dir, "generate.go")); err != nil {
		t.Fatal(err)
	}
	if _, _, stderr := runBinary(t, dir, "check", "-out", "rides", "schema.yaml"); !strings.Contains(stderr, "(run ordergen generate -out rides schema.yaml)") {
		t.Errorf("check without go:generate: %s", stderr)
	}
}

func TestDocsCreatesItsFolderThroughTheBinary(t *testing.T) {
	dir := newModule(t)
	if err := os.WriteFile(filepath.Join(dir, "schema.yaml"), []byte(ledgerSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runBinary(t, dir, "docs", "-out", "docs/events.md", "schema.yaml")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("docs -out docs/events.md: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "docs", "events.md"))
	if err != nil || !strings.Contains(string(b), "# Package ledger: event catalogue") {
		t.Fatalf("docs/events.md (%v):\n%.200s", err, b)
	}
	if code, _, stderr := runBinary(t, dir, "docs", "-check", "-out", "docs/events.md", "schema.yaml"); code != 0 {
		t.Errorf("docs -check after docs -out: exit %d %s", code, stderr)
	}
}
