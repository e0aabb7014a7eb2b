package generator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/validate"
)

// fakeResolver resolves every qualified type without the go command,
// except those whose path contains "nope".
type fakeResolver struct{}

func (fakeResolver) Resolve(refs []validate.Ref) ([]validate.Resolved, []error) {
	res := make([]validate.Resolved, len(refs))
	errs := make([]error, len(refs))
	for i, r := range refs {
		if strings.Contains(r.Path, "nope") {
			errs[i] = os.ErrNotExist
			continue
		}
		res[i] = validate.Resolved{PkgName: "ext", Comparable: true}
	}
	return res, errs
}

// FuzzLoad feeds arbitrary text to the loader and the validator, and the
// schemas they accept to the emitter. None may panic; a rejected schema
// must come with at least one diagnostic, each with a position; an
// accepted one must generate gofmt-clean files.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("version: 1\npackage: p\nentities: {A: {key: {field: ID, type: string}, events: {E: {}}}}\n"))
	golden := goldenSchemas(f)
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, src []byte) {
		if !fuzzing && golden[string(src)] {
			// The golden schemas seed the fuzzer. Run as tests, they
			// would repeat TestGolden, which checks the same stages' exact
			// output (generating every golden again took 14 s under -race).
			t.Skip("a golden schema: TestGolden checks it")
		}
		pkg, diags := Check(src, fakeResolver{})
		if pkg == nil {
			if diags.Len() == 0 {
				t.Fatal("schema rejected without a diagnostic")
			}
			for _, d := range diags.Items() {
				if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Msg == "" {
					t.Fatalf("diagnostic without position or message: %+v", d)
				}
			}
			return
		}
		if diags.Len() != 0 {
			t.Fatalf("schema accepted with diagnostics:\n%s", diags.Format("fuzz"))
		}
		if _, err := emit.Files(pkg); err != nil {
			t.Fatalf("accepted schema does not generate: %v", err)
		}
	})
}

// goldenSchemas returns the schemas of the golden cases.
func goldenSchemas(f *testing.F) map[string]bool {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	out := make(map[string]bool, len(paths))
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name == "schema.yaml" {
				out[string(file.Data)] = true
			}
		}
	}
	return out
}

// TestFuzzCorpus checks that every golden schema seeds the fuzz corpus in
// testdata/fuzz/FuzzLoad; -update writes the seeds.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzLoad")
	for _, c := range loadGolden(t) {
		path := filepath.Join(dir, "golden_"+c.name)
		want := []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(c.schema)) + ")\n")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or stale: run go test ./generator -run TestFuzzCorpus -update", path)
		}
	}
}
