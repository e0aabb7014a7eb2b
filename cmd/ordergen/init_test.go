package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/jsonschema"
)

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "order-events")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "init")
	if code != 0 || !strings.Contains(stdout, "wrote schema.yaml and generate.go") {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	schema, err := os.ReadFile("schema.yaml")
	if err != nil || !bytes.HasPrefix(schema, []byte(jsonschema.Comment+"\n")) || !bytes.Contains(schema, []byte("\npackage: orderevents\n")) {
		t.Errorf("schema.yaml (%v):\n%s", err, schema)
	}
	gen, err := os.ReadFile("generate.go")
	if err != nil || !bytes.HasPrefix(gen, []byte("package orderevents\n")) || !bytes.Contains(gen, []byte("//go:generate go tool ordergen generate schema.yaml")) {
		t.Errorf("generate.go (%v):\n%s", err, gen)
	}
	// The starter schema generates.
	if code, _, stderr := runCLI(t, "generate", "schema.yaml"); code != 0 {
		t.Errorf("generate the starter schema: exit %d\n%s", code, stderr)
	}
	// A second init overwrites nothing.
	if err := os.WriteFile("schema.yaml", []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove("generate.go"); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "init")
	if code != 1 || !strings.Contains(stderr, "refusing to overwrite schema.yaml") {
		t.Errorf("init over schema.yaml: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile("schema.yaml"); string(b) != "mine\n" {
		t.Errorf("schema.yaml overwritten: %q", b)
	}
	if _, err := os.Stat("generate.go"); !os.IsNotExist(err) {
		t.Error("init wrote generate.go although it refused")
	}
}

func TestInitPackages(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "service.go"), []byte("package billing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "init", "-package", "ledger"); code != 0 {
		t.Fatalf("init: exit %d %s", code, stderr)
	}
	gen, _ := os.ReadFile("generate.go")
	schema, _ := os.ReadFile("schema.yaml")
	if !bytes.HasPrefix(gen, []byte("package billing\n")) || !bytes.Contains(schema, []byte("\npackage: ledger\n")) {
		t.Errorf("generate.go:\n%s\nschema.yaml:\n%s", gen, schema)
	}
	for _, args := range [][]string{{"init", "extra"}, {"init", "-package", "Bad"}, {"init", "-bogus"}} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestJSONSchema(t *testing.T) {
	code, stdout, _ := runCLI(t, "jsonschema")
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil || m["$id"] != jsonschema.URL {
		t.Errorf("jsonschema: exit %d, %.200s", code, stdout)
	}
	if code, _, _ := runCLI(t, "jsonschema", "x"); code != 2 {
		t.Errorf("jsonschema x: exit %d, want 2", code)
	}
}
