package jsonschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

func mustChecker(t *testing.T) *Checker {
	t.Helper()
	c, err := NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// goldenSchemas returns the schema.yaml of every txtar archive matching
// glob, and whether its case is valid (it has no errors file).
func goldenSchemas(t *testing.T, glob string) map[string]struct {
	src   []byte
	valid bool
} {
	t.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no archives match %s: %v", glob, err)
	}
	out := map[string]struct {
		src   []byte
		valid bool
	}{}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var src []byte
		valid := true
		for _, f := range a.Files {
			switch f.Name {
			case "schema.yaml":
				src = f.Data
			case "errors":
				valid = false
			}
		}
		out[p] = struct {
			src   []byte
			valid bool
		}{src, valid}
	}
	return out
}

func TestSchemaIsValidJSON(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(Schema(), &m); err != nil {
		t.Fatal(err)
	}
	if m["$id"] != URL {
		t.Errorf("$id is %v, want %s", m["$id"], URL)
	}
}

// TestValidSchemasPass checks the example and every valid golden case.
func TestValidSchemasPass(t *testing.T) {
	v := mustChecker(t)
	sources := map[string][]byte{}
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sources["examples/schema.yaml"] = b
	for _, glob := range []string{filepath.Join("..", "testdata", "*.txtar"), filepath.Join("..", "docs", "testdata", "*.txtar")} {
		for p, c := range goldenSchemas(t, glob) {
			if c.valid {
				sources[p] = c.src
			}
		}
	}
	if len(sources) < 10 {
		t.Fatalf("only %d valid schemas found", len(sources))
	}
	for name, src := range sources {
		if err := v.Check(src); err != nil {
			t.Errorf("%s does not validate: %v", name, err)
		}
	}
}

// TestShapeErrorsFail checks that the golden cases whose errors are about
// the shape of the document fail against the JSON Schema too.
func TestShapeErrorsFail(t *testing.T) {
	v := mustChecker(t)
	cases := goldenSchemas(t, filepath.Join("..", "testdata", "err_*.txtar"))
	checked := 0
	for _, name := range []string{
		"err_bad_package", "err_duplicate_key", "err_durations", "err_empty", "err_entities_shape",
		"err_invalid_identifier", "err_key_types", "err_missing_required", "err_policy_values",
		"err_shapes", "err_unknown_key", "err_wrong_version",
	} {
		c, ok := cases[filepath.Join("..", "testdata", name+".txtar")]
		if !ok {
			t.Errorf("no golden case %s", name)
			continue
		}
		if _, err := FromYAML(c.src); err != nil {
			continue // not even JSON-like YAML (a duplicate key, .inf): no editor accepts it
		}
		checked++
		if err := v.Check(c.src); err == nil {
			t.Errorf("%s passes the JSON Schema", name)
		}
	}
	if checked < 9 {
		t.Errorf("only %d shape error cases could be checked", checked)
	}
}

// TestMistakesFail breaks the example in ways the JSON Schema catches.
func TestMistakesFail(t *testing.T) {
	v := mustChecker(t)
	good, err := os.ReadFile(filepath.Join("..", "..", "examples", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ old, new string }{
		{"version: 1", "version: 2"},
		{"package: ledger", "package: Ledger"},
		{"timeout: 5s ", "timeuot: 5s "},
		{"jitter: full", "jitter: some"},
		{"initial: 10ms", "initial: 10"},
		{"attempts: 5", "attempts: 0"},
		{"multiplier: 2", "multiplier: 0.5"},
		{"when_full: reject", "when_full: wait"},
		{"kind: snapshot", "kind: full"},
		{"[Placed, Paid, Shipped, Delivered]", "[Placed, Paid, Shipped, Placed]"},
		{"states: [Placed, Paid, Shipped, Delivered]", "states: Placed"},
		{"- Frozen: {doc: No", "- Frozen: {dco: No"},
		{"doc: No withdrawals until the account is closed.", "doc: 42"},
		{"doc: Money paid into the account.", "doc: {text: money}"},
		{"conflate: true", "conflate: yes please"},
		{"{field: AccountID, type: string}", "{field: AccountID, type: float64}"},
		{"{field: AccountID, type: string}", "{field: AccountID}"},
		{"{from: [Placed, Paid], doc:", "{from: [], doc:"},
		{"Withdrew:      {fields: {Amount: int64}}", "withdrew:      {fields: {Amount: int64}}"},
		{"Withdrew:      {fields: {Amount: int64}}", "Withdrew:      {fields: {Amount: int64}, to: [Open]}"},
		{"delivery: at-least-once ", "delivery: exactly-once "},
		{"on_gap: resync ", "on_gap: always "},
		{"batch: {max_events: 64", "batch: {max_events: 0"},
		{"linger: 2ms}", "linger: soon}"},
		{"    batch: {max_events: 64, linger: 2ms}", "    batch: {max_events: 64, linger: 2ms}\n    conflate: true"},
		{"    notification: true", "    notification: true\n    states: [Known]"},
		{"    notification: true", "    notification: true\n    version: {field: Version}"},
		{"      CustomerChanged: {}", "      CustomerChanged: {fields: {Name: string}}"},
		{"    retry: {attempts: 8}", "    retry: {attempts: 8}\n    on_gap: resync"},
		{"OrderDelivered: {to: Delivered}", "OrderDelivered: {to: Delivered, in: [Shipped]}"},
		{"OrderDelivered: {to: Delivered}", "OrderDelivered: {in: []}"},
		{"OrderDelivered: {to: Delivered}", "OrderDelivered: {in: Shipped}"},
		{"OrderDelivered: {to: Delivered}", "OrderDelivered: {in: [Shipped, Shipped]}"},
	} {
		if !strings.Contains(string(good), m.old) {
			t.Fatalf("the example has no %q", m.old)
		}
		src := strings.Replace(string(good), m.old, m.new, 1)
		if err := v.Check([]byte(src)); err == nil {
			t.Errorf("%q -> %q passes the JSON Schema", m.old, m.new)
		}
	}
}
