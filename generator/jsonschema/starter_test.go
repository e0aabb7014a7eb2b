package jsonschema_test

import (
	"testing"

	"github.com/ordergen/ordergen/generator/jsonschema"
	"github.com/ordergen/ordergen/generator/scaffold"
)

// TestStarterSchemaPasses checks the schema that ordergen init writes.
func TestStarterSchemaPasses(t *testing.T) {
	files, err := scaffold.Files("orders", "orders")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Check(files[0].Contents); err != nil {
		t.Errorf("the starter schema fails the JSON Schema: %v", err)
	}
}
