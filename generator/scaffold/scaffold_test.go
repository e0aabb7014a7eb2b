package scaffold

import (
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/jsonschema"
)

func TestFiles(t *testing.T) {
	files, err := Files("orders", "service")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "schema.yaml" || files[1].Name != "generate.go" {
		t.Fatalf("files: %+v", files)
	}
	schema := string(files[0].Contents)
	if !strings.HasPrefix(schema, jsonschema.Comment+"\n") || !strings.Contains(schema, "\npackage: orders\n") {
		t.Errorf("schema.yaml:\n%s", schema)
	}
	if pkg, diags := generator.Check(files[0].Contents, nil); pkg == nil {
		t.Errorf("the starter schema is invalid:\n%s", diags.Format("schema.yaml"))
	}
	gen := string(files[1].Contents)
	if !strings.HasPrefix(gen, "package service\n") || !strings.Contains(gen, "\n//go:generate go tool ordergen generate schema.yaml\n") {
		t.Errorf("generate.go:\n%s", gen)
	}
	if _, err := Files("Orders", "service"); err == nil {
		t.Error("accepted package Orders")
	}
	if _, err := Files("orders", "func"); err == nil {
		t.Error("accepted package func")
	}
}

func TestPackageName(t *testing.T) {
	for in, want := range map[string]string{
		"orders": "orders", "Order-Events": "orderevents", "2fa": "fa", "type": "events", "---": "events", "a_b": "a_b",
	} {
		if got := PackageName(in); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", in, got, want)
		}
	}
}
