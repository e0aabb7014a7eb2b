package generator

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/scaffold"
	"github.com/ordergen/ordergen/runtime"
)

// policyOf returns the resolved policy of the entity A of a schema with
// the given defaults: block (YAML lines, indented as under defaults:).
func policyOf(t *testing.T, what, defaults string) ir.Policy {
	t.Helper()
	src := "version: 1\npackage: p\n"
	if defaults != "" {
		src += "defaults:\n" + defaults
	}
	src += "entities:\n  A:\n    key: {field: ID, type: string}\n    version: {field: V}\n    events: {E: {}}\n"
	pkg, diags := Check([]byte(src), nil)
	if pkg == nil {
		t.Fatalf("%s:\n%s\n%s", what, src, diags.Format("schema.yaml"))
	}
	return pkg.Entities[0].Policy
}

// TestDefaultsAreTheRuntimes ties the generator's defaults to the
// runtime's: what a schema leaves out resolves to the runtime's Default
// constants (which a runtime.Config's zero fields take too), and the
// defaults that the generator's documentation and the starter schema of
// ordergen init state are those.
func TestDefaultsAreTheRuntimes(t *testing.T) {
	want := ir.Policy{
		MaxActive: runtime.DefaultMaxActive,
		Backlog:   runtime.Backlog{PerKey: runtime.DefaultPerKey, Total: runtime.DefaultTotal, WhenFull: runtime.DefaultWhenFull},
		Retry: runtime.Retry{
			Attempts: runtime.DefaultAttempts, Initial: runtime.DefaultInitial,
			Max: runtime.DefaultMaxBackoff, Multiplier: runtime.DefaultMultiplier,
		},
		Timeout:     runtime.DefaultTimeout,
		OnExhausted: runtime.DefaultOnExhausted,
		MaxHeld:     runtime.DefaultMaxHeld,
		MaxHold:     runtime.DefaultMaxHold,
	}
	if got := policyOf(t, "no defaults", ""); got != want {
		t.Errorf("a schema without defaults resolves to\n%+v, the runtime's defaults are\n%+v", got, want)
	}

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "//\tdefaults:")
	block, _, _ = strings.Cut(block, "//\tentities:")
	block = strings.ReplaceAll(block, "//\t", "")
	// The documentation shows backlog.wait's form; it has no default.
	block = strings.Replace(block, ", wait: 200ms", "", 1)
	_, block, _ = strings.Cut(block, "\n")
	if got := policyOf(t, "generator/doc.go", block); got != want {
		t.Errorf("the defaults generator/doc.go states resolve to\n%+v, the runtime's are\n%+v", got, want)
	}

	files, err := scaffold.Files("p", "p")
	if err != nil {
		t.Fatal(err)
	}
	_, starter, _ := bytes.Cut(files[0].Contents, []byte("\ndefaults:"))
	starter, _, _ = bytes.Cut(starter, []byte("\nentities:"))
	_, starter, _ = bytes.Cut(starter, []byte("\n"))
	if got := policyOf(t, "the starter schema", string(starter)+"\n"); got != want {
		t.Errorf("the defaults of the starter schema resolve to\n%+v, the runtime's are\n%+v", got, want)
	}
}

// TestGroupIsAPolicy checks that group: resolves like the other policies:
// absent it is off (no runtime default turns it on), given it is on with
// its values, given empty it is on with groupcommit's defaults (zeros), and
// an entity inherits it from defaults:.
func TestGroupIsAPolicy(t *testing.T) {
	for _, c := range []struct {
		what, defaults string
		on             bool
		maxEvents      int
		linger         time.Duration
	}{
		{"no group", "", false, 0, 0},
		{"group with values", "  group: {max_events: 512, linger: 2ms}\n", true, 512, 2 * time.Millisecond},
		{"empty group", "  group: {}\n", true, 0, 0},
		{"a zero linger", "  group: {linger: 0}\n", true, 0, 0},
	} {
		p := policyOf(t, c.what, c.defaults)
		if p.Group.On != c.on || p.Group.MaxEvents != c.maxEvents || p.Group.Linger != c.linger {
			t.Errorf("%s: Grouped %v, GroupMaxEvents %d, GroupLinger %v; want %v, %d, %v",
				c.what, p.Group.On, p.Group.MaxEvents, p.Group.Linger, c.on, c.maxEvents, c.linger)
		}
	}
}
