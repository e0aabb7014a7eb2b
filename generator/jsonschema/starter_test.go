package jsonschema_test

import (
	"testing"

	"github.com/ordergen/ordergen/generator/jsonschema"
	"github.com/ordergen/ordergen/generator/jsonschema/internal/validator"
	"github.com/ordergen/ordergen/generator/scaffold"
)

// TestStarterSchemaPasses checks the schema that ordergen init writes.
func TestStarterSchemaPasses(t *testing.T) {
	files, err := scaffold.Files("orders", "orders")
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator.New(jsonschema.Schema())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := validator.FromYAML(files[0].Contents)
	if err != nil {
		t.Fatal(err)
	}
	if errs := v.Validate(doc); len(errs) > 0 {
		t.Errorf("the starter schema fails the JSON Schema: %v", errs)
	}
}
