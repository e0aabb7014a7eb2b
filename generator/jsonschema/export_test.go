package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// Checker checks documents against the JSON Schema with
// github.com/santhosh-tekuri/jsonschema, a maintained implementation of
// every draft, as an editor's language server would. It is declared in a
// test file, for this package's tests and the external ones (the starter
// schema's).
type Checker struct {
	schema *js.Schema
}

// NewChecker compiles the JSON Schema.
func NewChecker() (*Checker, error) {
	doc, err := js.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		return nil, fmt.Errorf("parse the JSON Schema: %w", err)
	}
	c := js.NewCompiler()
	if err := c.AddResource(URL, doc); err != nil {
		return nil, fmt.Errorf("add the JSON Schema: %w", err)
	}
	s, err := c.Compile(URL)
	if err != nil {
		return nil, fmt.Errorf("compile the JSON Schema: %w", err)
	}
	return &Checker{schema: s}, nil
}

// Check returns nil when the YAML document src passes the JSON Schema, and
// otherwise an error that lists every violation. A document that is not
// even JSON-like YAML (a duplicate key, .inf) is an error too.
func (c *Checker) Check(src []byte) error {
	doc, err := FromYAML(src)
	if err != nil {
		return err
	}
	return c.schema.Validate(doc)
}

// FromYAML converts a YAML document to the value encoding/json decodes
// from the same data written as JSON.
func FromYAML(src []byte) (any, error) {
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("to json: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("from json: %w", err)
	}
	return out, nil
}
