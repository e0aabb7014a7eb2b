package breaking

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata")

type goldenCase struct {
	name, path string
	archive    *txtar.Archive
	old, new   []byte
	want       []byte
}

func loadCases(t *testing.T) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	var out []goldenCase
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := goldenCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, archive: a}
		for _, f := range a.Files {
			switch f.Name {
			case "old.yaml":
				c.old = f.Data
			case "new.yaml":
				c.new = f.Data
			case "want":
				c.want = f.Data
			}
		}
		if c.old == nil || c.new == nil {
			t.Fatalf("%s: want old.yaml and new.yaml", p)
		}
		out = append(out, c)
	}
	return out
}

func run(t *testing.T, c goldenCase) []byte {
	t.Helper()
	old, diags := Load(c.old)
	if old == nil {
		t.Fatalf("%s: old.yaml: %s", c.name, diags.Format("old.yaml"))
	}
	new, diags := Load(c.new)
	if new == nil {
		t.Fatalf("%s: new.yaml: %s", c.name, diags.Format("new.yaml"))
	}
	list := Compare(old, new)
	return []byte(list.Format("new.yaml"))
}

// TestGolden compares the changes found in each case with its want file
// (go test ./generator/breaking -update rewrites them).
func TestGolden(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, c)
			if *update {
				c.archive.Files = []txtar.File{{Name: "old.yaml", Data: c.old}, {Name: "new.yaml", Data: c.new}, {Name: "want", Data: got}}
				if err := os.WriteFile(c.path, txtar.Format(c.archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, c.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestEveryRuleHasCases checks that each rule has a case that triggers it
// (rule_break) and one that does not (rule_ok), that the second is fully
// compatible, and that no case reports a rule not listed.
func TestEveryRuleHasCases(t *testing.T) {
	outputs := map[string]string{}
	for _, c := range loadCases(t) {
		outputs[c.name] = string(run(t, c))
	}
	known := map[string]bool{}
	for _, r := range Rules() {
		known[r.ID] = true
		if r.Purpose == "" || !strings.HasSuffix(r.Purpose, ".") || strings.Count(r.Purpose, ". ") > 0 {
			t.Errorf("%s: the purpose must be one sentence: %q", r.ID, r.Purpose)
		}
		base := strings.ToLower(r.ID)
		brk, ok := outputs[base+"_break"]
		if !ok {
			t.Errorf("%s: no case %s_break", r.ID, base)
		} else if !strings.Contains(brk, ": "+r.ID+": ") {
			t.Errorf("%s: %s_break does not trigger it:\n%s", r.ID, base, brk)
		}
		if out, ok := outputs[base+"_ok"]; !ok {
			t.Errorf("%s: no case %s_ok", r.ID, base)
		} else if out != "" {
			t.Errorf("%s: %s_ok reports changes:\n%s", r.ID, base, out)
		}
	}
	for name, out := range outputs {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			parts := strings.SplitN(line, ": ", 3)
			if len(parts) < 3 || !known[parts[1]] {
				t.Errorf("%s: line %q does not name a known rule", name, line)
			}
		}
	}
	if outputs["compatible"] != "" {
		t.Errorf("compatible changes reported:\n%s", outputs["compatible"])
	}
}

func TestLoadReportsInvalidSchemas(t *testing.T) {
	if s, diags := Load([]byte("version: 1\npackage: x\nentities: {A: {key: {field: ID, type: float64}, events: {E: {}}}}\n")); s != nil || diags.Len() == 0 {
		t.Error("an invalid schema loaded")
	}
	if s, diags := Load([]byte("version: 1\npackage: x\nentities: {A: {key: {field: ID, type: string}, events: {E: {fields: {M: example.com/money.Amount}}}}}\n")); s == nil {
		t.Errorf("a qualified type that does not resolve here was refused: %s", diags.Format("x"))
	}
}
