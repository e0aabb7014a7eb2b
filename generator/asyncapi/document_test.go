package asyncapi

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/validate"
)

// validSchemas returns the valid schemas of the generator's golden cases
// and of this package's, by archive path, resolved.
func validSchemas(t *testing.T) map[string]*ir.Package {
	t.Helper()
	out := make(map[string]*ir.Package)
	for _, dir := range []string{filepath.Join("..", "testdata"), "testdata"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		r := &validate.PackagesResolver{Dir: dir}
		for _, p := range paths {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if pkg, _ := generator.Check(schemaOf(t, a), r); pkg != nil {
				out[p] = pkg
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d valid golden schemas", len(out))
	}
	return out
}

// refs returns every $ref of a decoded document.
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && k == "$ref" {
				out = append(out, s)
			}
			out = append(out, refs(c)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, refs(c)...)
		}
	}
	return out
}

// TestEveryValidGoldenSchema writes the document of every valid golden
// schema, twice, and checks what holds for any: the same bytes both
// times, the header first, every reference resolving inside the document,
// a channel per entity and broker (one without an address for an entity
// without brokers) with a send and a receive operation, and a message and
// a payload per event whose properties are the key, the version and the
// fields, by wire name, all required.
func TestEveryValidGoldenSchema(t *testing.T) {
	for path, pkg := range validSchemas(t) {
		doc, err := Document(pkg)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		again, err := Document(pkg)
		if err != nil || !bytes.Equal(doc, again) {
			t.Errorf("%s: a second document differs (%v)", path, err)
		}
		if !bytes.HasPrefix(doc, []byte(Header+"\nasyncapi: 3.0.0\n")) {
			t.Errorf("%s: the document starts %.60q", path, doc)
		}
		s := compile(t, doc)
		for _, r := range refs(s.root) {
			target, ok := strings.CutPrefix(r, "#")
			if !ok || s.node(target) == nil {
				t.Errorf("%s: $ref %s does not resolve", path, r)
			}
		}
		for _, e := range pkg.Entities {
			checkEntity(t, path, s, e)
		}
	}
}

func checkEntity(t *testing.T, path string, s *schemas, e *ir.Entity) {
	t.Helper()
	ids := []string{e.Name}
	if len(e.Brokers) > 0 {
		ids = nil
		for _, b := range e.Brokers {
			ids = append(ids, e.Name+"."+b.Kind)
		}
	}
	for i, id := range ids {
		ch, ok := s.node("/channels/" + id).(map[string]any)
		if !ok {
			t.Errorf("%s: no channel %s", path, id)
			continue
		}
		switch {
		case len(e.Brokers) == 0 && ch["address"] != nil:
			t.Errorf("%s: channel %s has the address %v, but the schema names no broker", path, id, ch["address"])
		case len(e.Brokers) > 0 && e.Brokers[i].Kind != ir.BrokerRabbitMQ && ch["address"] != e.Brokers[i].Address:
			t.Errorf("%s: channel %s has the address %v, want %s", path, id, ch["address"], e.Brokers[i].Address)
		}
		for _, action := range []string{"send", "receive"} {
			if got := s.node("/operations/" + id + "." + action + "/action"); got != action {
				t.Errorf("%s: operation %s.%s: action %v", path, id, action, got)
			}
		}
	}
	for _, ev := range e.Events {
		if s.node("/components/messages/"+ev.Name+"/payload") == nil {
			t.Errorf("%s: no message %s", path, ev.Name)
		}
		var want []string
		want = append(want, e.Key.Wire)
		if e.Version != nil {
			want = append(want, e.Version.Wire)
		}
		for _, f := range ev.Fields {
			want = append(want, f.Wire)
		}
		props, _ := s.node("/components/schemas/" + ev.Name + "/properties").(map[string]any)
		required, _ := s.node("/components/schemas/" + ev.Name + "/required").([]any)
		if len(props) != len(want) || len(required) != len(want) {
			t.Errorf("%s: schema %s has %d properties and %d required, want %d: %v", path, ev.Name, len(props), len(required), len(want), want)
			continue
		}
		for i, w := range want {
			if _, ok := props[w]; !ok || required[i] != w {
				t.Errorf("%s: schema %s lacks %s (required %v)", path, ev.Name, w, required)
			}
		}
	}
}

// TestNonASCIINamesAreRefused: the generator takes Unicode upper-case
// letters in names, AsyncAPI's component names are ASCII.
func TestNonASCIINamesAreRefused(t *testing.T) {
	pkg := check(t, []byte("version: 1\npackage: x\nentities:\n  Ärger:\n    key: {field: ID, type: string}\n    events:\n      Über: {}\n"), ".")
	_, err := Document(pkg)
	if err == nil || !strings.Contains(err.Error(), "event Über of entity Ärger: AsyncAPI names messages with ASCII letters") {
		t.Errorf("got %v", err)
	}
}
