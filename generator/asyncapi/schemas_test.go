package asyncapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// docURL is where the tests load a document for the JSON Schema compiler.
const docURL = "file:///asyncapi.json"

// schemas compiles the JSON Schemas of a document (its payloads' and
// headers') with github.com/santhosh-tekuri/jsonschema, so that tests can
// check values against what the document says.
type schemas struct {
	c    *js.Compiler
	root map[string]any
}

func compile(t *testing.T, doc []byte) *schemas {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatalf("the document is not YAML: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := js.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := js.NewCompiler()
	c.DefaultDraft(js.Draft7)
	if err := c.AddResource(docURL, parsed); err != nil {
		t.Fatal(err)
	}
	return &schemas{c: c, root: parsed.(map[string]any)}
}

// at returns the schema at the JSON pointer ptr ("/components/schemas/X").
func (s *schemas) at(t *testing.T, ptr string) *js.Schema {
	t.Helper()
	sch, err := s.c.Compile(docURL + "#" + ptr)
	if err != nil {
		t.Fatalf("compile %s: %v", ptr, err)
	}
	return sch
}

// node returns the document's value at ptr, nil when there is none.
func (s *schemas) node(ptr string) any {
	var cur any = s.root
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		switch v := cur.(type) {
		case map[string]any:
			cur = v[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

// validJSON reports whether the JSON text data passes sch.
func validJSON(t *testing.T, sch *js.Schema, data []byte) error {
	t.Helper()
	v, err := js.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", data, err)
	}
	return sch.Validate(v)
}
