package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateTestKitInModule generates into a module: the test kit goes
// into gen/ledgertest and imports the generated package by its path; check
// reports a stale kit file; without a go.mod there is no kit.
func TestGenerateTestKitInModule(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/svc\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "events")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "schema.yaml")
	if err := os.WriteFile(schema, []byte(ledgerSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "generate", schema)
	if code != 0 || stderr != "" {
		t.Fatalf("generate in a module: exit %d, stderr %q (want no note)", code, stderr)
	}
	kit := filepath.Join(dir, "ledger", "ledgertest")
	b, err := os.ReadFile(filepath.Join(kit, "harnesses.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"example.com/svc/events/ledger"`) || !strings.Contains(string(b), "func NewAccountHarness(") {
		t.Errorf("the kit does not import example.com/svc/events/ledger or lacks NewAccountHarness:\n%.600s", b)
	}
	if code, _, stderr := runCLI(t, "check", schema); code != 0 {
		t.Fatalf("check after generate: exit %d\n%s", code, stderr)
	}
	if err := os.Remove(filepath.Join(kit, "recorders.go")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "check", schema); code != 1 || !strings.Contains(stderr, "missing "+filepath.Join(dir, "ledger", "ledgertest", "recorders.go")) {
		t.Errorf("check with a kit file missing: exit %d\n%s", code, stderr)
	}
	// Renaming the package moves the code and the kit; generate warns about
	// the folder it left behind.
	if err := os.WriteFile(schema, []byte(strings.Replace(ledgerSchema, "package: ledger", "package: bank", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "generate", schema)
	if code != 0 || !strings.Contains(stderr, "warning: "+filepath.Join(dir, "ledger")+" holds code ordergen generated earlier (package ledger)") {
		t.Errorf("generate after a rename: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bank", "banktest", "kit.go")); err != nil {
		t.Errorf("no new kit: %v", err)
	}
}

func TestImportPath(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m // comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		root:                                 "example.com/m",
		filepath.Join(root, "a", "b", "gen"): "example.com/m/a/b/gen",
	} {
		if got, err := importPath(dir); err != nil || got != want {
			t.Errorf("importPath(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
}
