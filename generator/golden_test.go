package generator

import (
	"bytes"
	"flag"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator/validate"
	"github.com/ordergen/ordergen/generator/write"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCase is one testdata/*.txtar archive: a schema.yaml, then either
// the generated files or an errors file.
type goldenCase struct {
	name    string
	path    string
	archive *txtar.Archive
	schema  []byte
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := goldenCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, archive: a}
		for _, f := range a.Files {
			if f.Name == "schema.yaml" {
				c.schema = f.Data
			}
		}
		if c.schema == nil {
			t.Fatalf("%s: no schema.yaml", p)
		}
		cases = append(cases, c)
	}
	return cases
}

var (
	resolverOnce sync.Once
	resolver     *validate.PackagesResolver
)

// testResolver resolves qualified types from testdata, inside this module.
func testResolver(t *testing.T) validate.Resolver {
	resolverOnce.Do(func() {
		dir, err := filepath.Abs("testdata")
		if err != nil {
			t.Fatal(err)
		}
		resolver = &validate.PackagesResolver{Dir: dir}
	})
	return resolver
}

// outputs holds each case's output, by archive path, made once for the
// tests that read it (generating every case under -race for each of them
// took minutes).
var outputs sync.Map

// output returns what the generator gives for c (see generate), made once
// per test binary.
func output(t *testing.T, c goldenCase) []txtar.File {
	t.Helper()
	if got, ok := outputs.Load(c.path); ok {
		return got.([]txtar.File)
	}
	got := generate(t, c)
	outputs.Store(c.path, got)
	return got
}

// generate runs the generator on c and returns the files it expects in the
// archive: the generated files, or one file named errors.
func generate(t *testing.T, c goldenCase) []txtar.File {
	t.Helper()
	files, diags, err := Generate(c.schema, Options{Resolver: testResolver(t), ImportPath: goldenImportPath(c)})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if diags.Len() > 0 {
		return []txtar.File{{Name: "errors", Data: []byte(diags.Format("schema.yaml"))}}
	}
	out := make([]txtar.File, len(files))
	for i, f := range files {
		out[i] = txtar.File{Name: f.Name, Data: f.Contents}
	}
	return out
}

// goldenImportPath is the import path of a case's generated code in the
// module that TestGoldenCompiles builds; the test kit imports it.
func goldenImportPath(c goldenCase) string {
	return "goldencheck/" + strings.ReplaceAll(c.name, "-", "_")
}

func TestGolden(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			got := output(t, c)
			if *update {
				a := &txtar.Archive{Comment: c.archive.Comment, Files: append([]txtar.File{{Name: "schema.yaml", Data: c.schema}}, got...)}
				if err := os.WriteFile(c.path, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := c.archive.Files[1:]
			if c.archive.Files[0].Name != "schema.yaml" {
				t.Fatalf("schema.yaml must be the first file of the archive")
			}
			names := func(fs []txtar.File) []string {
				var n []string
				for _, f := range fs {
					n = append(n, f.Name)
				}
				return n
			}
			if strings.Join(names(got), " ") != strings.Join(names(want), " ") {
				t.Fatalf("files: got %v, want %v (run go test ./generator -run TestGolden -update)", names(got), names(want))
			}
			for i := range got {
				if strings.HasSuffix(got[i].Name, ".go") {
					formatted, err := format.Source(got[i].Data)
					if err != nil || !bytes.Equal(formatted, got[i].Data) {
						t.Errorf("%s is not gofmt-clean (%v)", got[i].Name, err)
					}
					// The header, then the package clause, or the package's
					// documentation and the package clause.
					if !bytes.HasPrefix(got[i].Data, []byte(Header+"\n\npackage ")) && !bytes.HasPrefix(got[i].Data, []byte(Header+"\n\n// Package ")) {
						t.Errorf("%s does not start with the header and the package clause", got[i].Name)
					}
				}
				if !bytes.Equal(got[i].Data, want[i].Data) {
					diff := write.Unified([]write.Change{{Name: got[i].Name, Kind: write.Changed, Old: want[i].Data, New: got[i].Data}})
					t.Errorf("%s differs from the golden (a/) (run go test ./generator -run TestGolden -update):\n%s", got[i].Name, diff)
				}
			}
		})
	}
}

// TestGoldenDeterministic checks that generating twice gives the same bytes.
func TestGoldenDeterministic(t *testing.T) {
	for _, c := range loadGolden(t) {
		a, b := output(t, c), generate(t, c)
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Errorf("%s: %s differs between two runs", c.name, a[i].Name)
			}
		}
	}
}

// moduleRoot returns the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	_, file, _, ok := goruntime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

// TestGoldenCompiles type-checks and vets the generated code of every
// golden case that has some, in one temporary module that uses this
// module's runtime through a replace directive. go vet runs the type
// checker on each package, so an output that does not compile fails here;
// what it leaves to the compiler's back end is exercised where generated
// code is built and run (the examples, the quick start's outside module,
// the benchmarks). Building the goldens as well took a minute more of a
// clean CI run, for machine code nobody runs.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	gomod := "module goldencheck\n\ngo 1.26.0\n\nrequire github.com/ordergen/ordergen v0.0.0\n\nreplace github.com/ordergen/ordergen => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	var built []string
	for _, c := range loadGolden(t) {
		files := c.archive.Files[1:]
		if len(files) == 1 && files[0].Name == "errors" {
			continue
		}
		pkgDir := filepath.Join(dir, strings.TrimPrefix(goldenImportPath(c), "goldencheck/"))
		for _, f := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(pkgDir, f.Name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		built = append(built, c.name)
	}
	sort.Strings(built)
	if len(built) == 0 {
		t.Fatal("no golden case generates code")
	}
	// -trimpath leaves the temporary folder out of the packages' cache keys,
	// so that a run vets only the outputs that changed since the last one
	// (without it, every run checked every golden package again: two
	// minutes of a loaded machine).
	cmd := exec.Command("go", "vet", "-trimpath", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet -trimpath ./... in %s: %v\n%s", dir, err, out)
	}
	t.Logf("type-checked and vetted %d golden outputs: %s", len(built), strings.Join(built, ", "))
}
