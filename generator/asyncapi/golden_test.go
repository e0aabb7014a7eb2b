package asyncapi

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/validate"
)

var update = flag.Bool("update", false, "rewrite the expected documents in testdata")

// schemaOf returns the schema.yaml of an archive.
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

// check loads a valid schema.
func check(t *testing.T, src []byte, dir string) *ir.Package {
	t.Helper()
	pkg, diags := generator.Check(src, &validate.PackagesResolver{Dir: dir})
	if pkg == nil {
		t.Fatalf("schema: %s", diags.Format("schema.yaml"))
	}
	return pkg
}

// TestGolden writes the document of each testdata case and compares it
// with its asyncapi.yaml (go test ./generator/asyncapi -update rewrites
// them).
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Document(check(t, schemaOf(t, a), "."))
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				a.Files = []txtar.File{{Name: "schema.yaml", Data: schemaOf(t, a)}, {Name: "asyncapi.yaml", Data: got}}
				if err := os.WriteFile(p, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(a.Files) != 2 || a.Files[1].Name != "asyncapi.yaml" {
				t.Fatal("want schema.yaml then asyncapi.yaml (run go test ./generator/asyncapi -update)")
			}
			if !bytes.Equal(got, a.Files[1].Data) {
				t.Errorf("document differs (run go test ./generator/asyncapi -update):\ngot:\n%s\nwant:\n%s", got, a.Files[1].Data)
			}
		})
	}
}
