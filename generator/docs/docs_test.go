package docs

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/validate"
)

var update = flag.Bool("update", false, "rewrite the expected catalogues in testdata")

func schemaOf(t *testing.T, a *txtar.Archive) []byte {
	t.Helper()
	for _, f := range a.Files {
		if f.Name == "schema.yaml" {
			return f.Data
		}
	}
	t.Fatal("no schema.yaml")
	return nil
}

// TestGolden renders each testdata case and compares it with its
// catalogue.md (go test ./generator/docs -update rewrites them).
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	r := &validate.PackagesResolver{Dir: "."}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			pkg, diags := generator.Check(schemaOf(t, a), r)
			if pkg == nil {
				t.Fatalf("schema: %s", diags.Format("schema.yaml"))
			}
			got, err := Catalogue(pkg, "schema.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				a.Files = []txtar.File{{Name: "schema.yaml", Data: schemaOf(t, a)}, {Name: "catalogue.md", Data: got}}
				if err := os.WriteFile(p, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(a.Files) != 2 || a.Files[1].Name != "catalogue.md" {
				t.Fatal("want schema.yaml then catalogue.md (run go test ./generator/docs -update)")
			}
			if !bytes.Equal(got, a.Files[1].Data) {
				t.Errorf("catalogue differs (run go test ./generator/docs -update):\ngot:\n%s\nwant:\n%s", got, a.Files[1].Data)
			}
			checkDiagrams(t, got)
		})
	}
}

var (
	diagramLine = regexp.MustCompile(`^    (?:state "(\w+) \(branch\)" as (\w+)|(\[\*\]|\w+) --> (\[\*\]|\w+)(?:: \w+(?:, \w+)*)?)$`)
	heading     = regexp.MustCompile(`(?m)^## (\w+)$`)
)

// checkDiagrams checks that every Mermaid block is a stateDiagram-v2 made
// only of state declarations and transitions, starting at [*].
func checkDiagrams(t *testing.T, doc []byte) {
	t.Helper()
	blocks := strings.Split(string(doc), "```mermaid\n")
	for _, b := range blocks[1:] {
		body, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatalf("unterminated mermaid block:\n%s", b)
		}
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if lines[0] != "stateDiagram-v2" {
			t.Errorf("diagram starts with %q", lines[0])
		}
		starts := 0
		for _, l := range lines[1:] {
			m := diagramLine.FindStringSubmatch(l)
			if m == nil {
				t.Errorf("not a state declaration or transition: %q", l)
				continue
			}
			if m[1] != m[2] {
				t.Errorf("state %q declared as %q", m[1], m[2])
			}
			if m[3] == "[*]" {
				starts++
			}
		}
		if starts != 1 {
			t.Errorf("%d transitions from [*], want 1:\n%s", starts, body)
		}
	}
	if got, want := len(blocks)-1, len(heading.FindAll(doc, -1)); got > want {
		t.Errorf("%d diagrams for %d entities", got, want)
	}
}

// TestEveryValidGoldenSchema renders the catalogue of every valid golden
// case of the generator.
func TestEveryValidGoldenSchema(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	r := &validate.PackagesResolver{Dir: filepath.Join("..", "testdata")}
	n := 0
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pkg, _ := generator.Check(schemaOf(t, a), r)
		if pkg == nil {
			continue
		}
		doc, err := Catalogue(pkg, "schema.yaml")
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, e := range pkg.Entities {
			if !bytes.Contains(doc, []byte("\n## "+e.Name+"\n")) {
				t.Errorf("%s: no section for entity %s", p, e.Name)
			}
			if len(e.States) > 0 && !bytes.Contains(doc, []byte("\n    [*] --> "+e.States[0])) {
				t.Errorf("%s: entity %s has states but no diagram starting at its first", p, e.Name)
			}
		}
		checkDiagrams(t, doc)
		n++
	}
	if n == 0 {
		t.Fatal("no valid golden case")
	}
}
