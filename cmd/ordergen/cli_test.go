package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command as a user meets it, through the built binary: help per
// subcommand, what generate says outside a module, and schema mistakes
// named for what they are.

func TestSubcommandHelpThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string // on stdout
	}{
		{[]string{"generate", "-h"}, []string{"usage: ordergen generate [-out DIR] SCHEMA\n", "-out DIR", "folder named after its package"}},
		{[]string{"check", "-help"}, []string{"usage: ordergen check [-out DIR] SCHEMA\n", "-out DIR"}},
		{[]string{"docs", "-h"}, []string{"usage: ordergen docs [-out FILE [-check]] SCHEMA\n", "-check", "-out FILE"}},
		{[]string{"asyncapi", "-h"}, []string{"usage: ordergen asyncapi [-out FILE [-check]] SCHEMA\n", "-check", "-out FILE", "AsyncAPI 3.0.0"}},
		{[]string{"breaking", "-h"}, []string{"usage: ordergen breaking -against OLD NEW\nusage: ordergen breaking -rules\n", "-against FILE", "ordergen:breaking-ok"}},
		{[]string{"init", "-h"}, []string{"usage: ordergen init [-package NAME]\n", "-package NAME"}},
		{[]string{"jsonschema", "-h"}, []string{"usage: ordergen jsonschema\n"}},
		{[]string{"version", "-h"}, []string{"usage: ordergen version\n"}},
		{[]string{"help", "breaking"}, []string{"usage: ordergen breaking -against OLD NEW\n", "-rules"}},
		{[]string{"-h"}, []string{"usage:\n  ordergen generate", "ordergen COMMAND -h says more"}},
	} {
		code, stdout, stderr := runBinary(t, dir, tc.args...)
		if code != 0 || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q; want 0 and nothing", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: stdout lacks %q:\n%s", tc.args, w, stdout)
			}
		}
		if len(tc.args) == 2 && tc.args[0] != "help" && strings.Contains(stdout, "ordergen COMMAND -h") {
			t.Errorf("%q printed the global usage:\n%s", tc.args, stdout)
		}
	}
	// A bad flag: exit 2, the error and the subcommand's usage on stderr.
	code, stdout, stderr := runBinary(t, dir, "generate", "-bogus", "schema.yaml")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "ordergen generate: flag provided but not defined: -bogus\nusage: ordergen generate [-out DIR] SCHEMA\n") {
		t.Errorf("a bad flag: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runBinary(t, dir, "genrate", "schema.yaml")
	if code != 2 || !strings.Contains(stderr, `unknown command "genrate" (did you mean generate?)`) {
		t.Errorf("a misspelt command: exit %d, stderr %q", code, stderr)
	}
}

func TestGenerateOutsideAModuleSaysSoThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "schema.yaml"), []byte(ledgerSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runBinary(t, dir, "generate", "schema.yaml")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "ordergen: note: ledger is in no Go module (no go.mod in it or above), so the test kit ledgertest was not generated: run go mod init") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ledger", "events.go")); err != nil {
		t.Errorf("no code in ledger/: %v", err)
	}
	// An older default output folder left beside the schema is named.
	if err := os.Rename(filepath.Join(dir, "ledger"), filepath.Join(dir, "gen")); err != nil {
		t.Fatal(err)
	}
	_, _, stderr = runBinary(t, dir, "generate", "schema.yaml")
	if !strings.Contains(stderr, "ordergen: warning: gen holds code ordergen generated earlier (package ledger), in an older default output folder; the code is now in ledger: remove gen") {
		t.Errorf("no warning about gen/: %q", stderr)
	}
}

func TestSchemaMistakesThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"tab", "  Account:\n", "\tAccount:\n", "schema.yaml:4:1: yaml syntax error: a tab character: YAML indents with spaces only (replace the tab with spaces)"},
		{"key", "    states: [Open, Closed]\n", "    stats: [Open, Closed]\n", `schema.yaml:7:5: unknown key "stats" in entity Account (did you mean states?)`},
		{"type", "{Amount: int64}", "{Amount: in64}", `unknown field type "in64": not a Go builtin type; name a type of another package as import/path.Type (did you mean int64?)`},
		{"state", "AccountClosed: {to: Closed}", "AccountClosed: {to: Closd}", `to: "Closd" is not a state of entity Account (did you mean Closed?)`},
	} {
		if !strings.Contains(ledgerSchema, tc.old) {
			t.Fatalf("%s: the schema has no %q", tc.name, tc.old)
		}
		if err := os.WriteFile(filepath.Join(dir, "schema.yaml"), []byte(strings.Replace(ledgerSchema, tc.old, tc.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runBinary(t, dir, "check", "schema.yaml")
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d\nstderr %q\nwant   %q", tc.name, code, stderr, tc.want)
		}
	}
}
