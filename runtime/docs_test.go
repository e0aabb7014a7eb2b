package runtime_test

import (
	"os"
	"strings"
	"testing"
)

// Point 11 of the liveness issue: the in-memory guard stores are not
// evicted, so the guarantees page, the package documentation and the
// stores' own doc comments must say that they grow with the keys seen and
// name the durable store as the answer.
func TestDocsSayWhatTheGuardStoresHold(t *testing.T) {
	for _, file := range []string{"../docs/guarantees.md", "doc.go", "guard.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "//", " ")), " ")
		for _, want := range []string{"grow with the number of keys", "durable store"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q", file, want)
			}
		}
	}
}
