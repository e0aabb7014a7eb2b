package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/breaking"
)

func TestBreakingFiles(t *testing.T) {
	old := writeSchema(t, ledgerSchema)
	compatible := writeSchema(t, strings.Replace(ledgerSchema, "{Amount: int64}", "{Amount: int64, Memo: string}", 1))
	// One line says so: silence left a user running it by hand unsure it
	// had compared anything.
	if code, stdout, stderr := runCLI(t, "breaking", "-against", old, compatible); code != 0 || stdout != compatible+": no breaking changes against "+old+"\n" || stderr != "" {
		t.Errorf("compatible: exit %d %q %q", code, stdout, stderr)
	}
	broken := writeSchema(t, strings.Replace(ledgerSchema, "{Amount: int64}", "{Amount: float64}", 1))
	code, stdout, stderr := runCLI(t, "breaking", "-against", old, broken)
	want := broken + ":10:36: FIELD_SAME_TYPE: entity Account, event Deposited: field Amount changed type from int64 to float64\n"
	if code != 1 || stdout != want || !strings.Contains(stderr, "1 breaking change") {
		t.Errorf("breaking: exit %d\nstdout %q\nwant   %q\nstderr %q", code, stdout, want, stderr)
	}
	bad := writeSchema(t, "version: 1\n")
	if code, _, stderr := runCLI(t, "breaking", "-against", bad, old); code != 1 || !strings.HasPrefix(stderr, bad+":1:1: ") {
		t.Errorf("bad old schema: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "breaking", "-against", old, bad); code != 1 || !strings.HasPrefix(stderr, bad+":1:1: ") {
		t.Errorf("bad new schema: exit %d %s", code, stderr)
	}
	for _, args := range [][]string{{"breaking"}, {"breaking", old}, {"breaking", "-against", old}, {"breaking", "-rules", old}, {"breaking", "-against", old, old, old}} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestBreakingRules(t *testing.T) {
	code, stdout, _ := runCLI(t, "breaking", "-rules")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) != len(breaking.Rules()) {
		t.Fatalf("exit %d, %d lines for %d rules:\n%s", code, len(lines), len(breaking.Rules()), stdout)
	}
	for i, r := range breaking.Rules() {
		if !strings.HasPrefix(lines[i], r.ID+" ") || !strings.HasSuffix(lines[i], r.Purpose) {
			t.Errorf("line %q does not list %s", lines[i], r.ID)
		}
	}
}

func TestBreakingAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	sub := filepath.Join(dir, "events")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(sub, "schema.yaml")
	if err := os.WriteFile(schema, []byte(ledgerSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "schema")
	if code, _, stderr := runCLI(t, "breaking", "-against", "git:main", schema); code != 0 {
		t.Errorf("unchanged against git:main: exit %d %s", code, stderr)
	}
	if err := os.WriteFile(schema, []byte(strings.Replace(ledgerSchema, "      AccountClosed: {to: Closed}\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "breaking", "-against", "git:main", schema)
	if code != 1 || !strings.Contains(stdout, schema+":8:5: EVENT_NO_DELETE: entity Account: event AccountClosed was removed") {
		t.Errorf("against git:main: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "breaking", "-against", "git:nosuchrev", schema); code != 1 || !strings.Contains(stderr, "git show nosuchrev:./schema.yaml") {
		t.Errorf("unknown revision: exit %d %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "breaking", "-against", "git:--help", schema); code != 1 {
		t.Errorf("an option as revision: exit %d, want 1", code)
	}
}

// TestBreakingThroughTheBinary runs the built command: a changed wire name
// is reported, a comment on its line accepts it (listed, exit 0), and the
// unaccepted rest still fails.
func TestBreakingThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	old := write("old.yaml", ledgerSchema)
	renamed := strings.Replace(ledgerSchema, "{Amount: int64}", "{Amount: {type: int64, wire: amount}}", 1)
	code, stdout, stderr := runBinary(t, dir, "breaking", "-against", old, write("wire.yaml", renamed))
	want := "wire.yaml:10:56: WIRE_NAME_SAME: entity Account, event Deposited: field Amount changed its wire name from \"Amount\" to \"amount\"\n"
	if code != 1 || stdout != want {
		t.Errorf("a changed wire name: exit %d\nstdout %q\nwant   %q\nstderr %s", code, stdout, want, stderr)
	}

	accepted := strings.Replace(renamed, "{Amount: {type: int64, wire: amount}}}", "{Amount: {type: int64, wire: amount}}}  # ordergen:breaking-ok WIRE_NAME_SAME no consumer reads Deposited yet", 1)
	code, stdout, stderr = runBinary(t, dir, "breaking", "-against", old, write("accepted.yaml", accepted))
	want = "accepted.yaml:10:56: accepted WIRE_NAME_SAME: entity Account, event Deposited: field Amount changed its wire name from \"Amount\" to \"amount\" (ordergen:breaking-ok: no consumer reads Deposited yet)\n"
	if code != 0 || stdout != want || !strings.Contains(stderr, "1 breaking change(s) against old.yaml, all accepted") {
		t.Errorf("an accepted change: exit %d\nstdout %q\nwant   %q\nstderr %s", code, stdout, want, stderr)
	}

	// The acceptance covers its line only: removing an event still fails.
	more := strings.Replace(accepted, "      AccountClosed: {to: Closed}\n", "", 1)
	code, stdout, _ = runBinary(t, dir, "breaking", "-against", old, write("more.yaml", more))
	if code != 1 || !strings.Contains(stdout, "accepted WIRE_NAME_SAME") || !strings.Contains(stdout, "more.yaml:8:5: EVENT_NO_DELETE: ") {
		t.Errorf("an accepted and an unaccepted change: exit %d\n%s", code, stdout)
	}

	// A typo in the rule is an error that names the rule meant.
	typo := strings.Replace(accepted, "WIRE_NAME_SAME no consumer", "WIRE_NAMES_SAME no consumer", 1)
	code, _, stderr = runBinary(t, dir, "breaking", "-against", old, write("typo.yaml", typo))
	if code != 1 || !strings.Contains(stderr, `typo.yaml:10:67: ordergen:breaking-ok names no rule "WIRE_NAMES_SAME" (did you mean WIRE_NAME_SAME?)`) {
		t.Errorf("a misspelt rule: exit %d\n%s", code, stderr)
	}

	// Against itself, the comment accepts nothing: a note, exit 0.
	code, stdout, stderr = runBinary(t, dir, "breaking", "-against", "accepted.yaml", "accepted.yaml")
	if code != 0 || stdout != "accepted.yaml: no breaking changes against accepted.yaml\n" || !strings.Contains(stderr, "accepted.yaml:10:67: note: ordergen:breaking-ok WIRE_NAME_SAME accepts nothing") {
		t.Errorf("an unused comment: exit %d\nstdout %q\nstderr %s", code, stdout, stderr)
	}
}

// TestBreakingUnusableCommentBesideTheChanges: a marker comment that names
// no rule (or an unknown one) is an error reported with every breaking
// change of the file, the one on its own line included, not instead of
// them.
func TestBreakingUnusableCommentBesideTheChanges(t *testing.T) {
	old := writeSchema(t, ledgerSchema)
	changed := strings.Replace(ledgerSchema, "{Amount: int64}}", "{Amount: float64}}  # ordergen:breaking-ok", 1)
	changed = strings.Replace(changed, "      AccountClosed: {to: Closed}\n", "", 1)
	for name, src := range map[string]string{
		"no rule":      changed,
		"unknown rule": strings.Replace(changed, "breaking-ok", "breaking-ok FIELD_TYPE_SAME cents became amounts", 1),
	} {
		path := writeSchema(t, src)
		code, stdout, stderr := runCLI(t, "breaking", "-against", old, path)
		wantOut := path + ":8:5: EVENT_NO_DELETE: entity Account: event AccountClosed was removed\n" +
			path + ":10:36: FIELD_SAME_TYPE: entity Account, event Deposited: field Amount changed type from int64 to float64\n"
		if code != 1 || stdout != wantOut {
			t.Errorf("%s: exit %d\nstdout %q\nwant   %q\nstderr %s", name, code, stdout, wantOut, stderr)
		}
		for _, want := range []string{path + ":10:47: ordergen:breaking-ok ", "2 breaking change(s)", "1 ordergen:breaking-ok comment(s) above cannot be used"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", name, want, stderr)
			}
		}
	}
}
