package breaking

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"
)

// FuzzCompare checks that comparing any two schemas never panics and that
// a valid schema is compatible with itself.
func FuzzCompare(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(a.Files) >= 2 {
			f.Add(a.Files[0].Data, a.Files[1].Data)
		}
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", "examples", "schema.yaml")); err == nil {
		f.Add(b, b)
	}
	f.Fuzz(func(t *testing.T, old, new []byte) {
		o, _ := Load(old)
		n, _ := Load(new)
		if o == nil || n == nil {
			return
		}
		Compare(o, n)
		if self := Compare(n, n); self.Len() != 0 {
			t.Errorf("a schema is incompatible with itself:\n%s", self.Format("new.yaml"))
		}
	})
}
