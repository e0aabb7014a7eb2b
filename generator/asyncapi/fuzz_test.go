package asyncapi

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/validate"
)

// anyResolver resolves every qualified type without the go command.
type anyResolver struct{}

func (anyResolver) Resolve(refs []validate.Ref) ([]validate.Resolved, []error) {
	res := make([]validate.Resolved, len(refs))
	for i := range res {
		res[i] = validate.Resolved{PkgName: "ext", Comparable: true}
	}
	return res, make([]error, len(refs))
}

// FuzzDocument writes the document of every schema the validator accepts,
// seeded with the golden ones: it must not panic, must fail only for a
// non-ASCII event name, and must be YAML that starts with the header and
// reads back with one channel or more per entity.
func FuzzDocument(f *testing.F) {
	for _, glob := range []string{"../testdata/*.txtar", "testdata/*.txtar"} {
		paths, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			a, err := txtar.ParseFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, file := range a.Files {
				if file.Name == "schema.yaml" {
					f.Add(file.Data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		pkg, _ := generator.Check(src, anyResolver{})
		if pkg == nil {
			return
		}
		doc, err := Document(pkg)
		if err != nil {
			if !strings.Contains(err.Error(), "AsyncAPI names messages with ASCII letters") {
				t.Fatalf("an accepted schema gives no document: %v", err)
			}
			return
		}
		if !strings.HasPrefix(string(doc), Header+"\n") {
			t.Fatalf("no header: %.80q", doc)
		}
		var back struct {
			AsyncAPI string         `yaml:"asyncapi"`
			Channels map[string]any `yaml:"channels"`
		}
		if err := yaml.Unmarshal(doc, &back); err != nil {
			t.Fatalf("the document does not read back: %v\n%s", err, doc)
		}
		if back.AsyncAPI != Version || len(back.Channels) < len(pkg.Entities) {
			t.Fatalf("read back asyncapi %q and %d channels for %d entities", back.AsyncAPI, len(back.Channels), len(pkg.Entities))
		}
	})
}
