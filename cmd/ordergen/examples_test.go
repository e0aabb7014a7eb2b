package main

import (
	"path/filepath"
	"testing"
)

// TestExamplesAreFresh runs check on every schema of examples/ and on the
// benchmarks module's (CI's .ci/run checks them too; this catches a
// generator change that leaves one stale in the generator's own tests).
func TestExamplesAreFresh(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	schemas = append(schemas, filepath.Join("..", "..", "examples", "schema.yaml"),
		filepath.Join("..", "..", "benchmarks", "schema.yaml"))
	if len(schemas) < 2 {
		t.Fatalf("schemas %v: want examples/schema.yaml and examples/wide/schema.yaml", schemas)
	}
	for _, s := range schemas {
		t.Run(s, func(t *testing.T) {
			t.Parallel() // each check runs the go command: in turn, seconds
			if code, stdout, stderr := runCLI(t, "check", s); code != 0 {
				t.Errorf("%s is stale (go run ./cmd/ordergen generate %s): exit %d\n%s%s", s, s, code, stderr, stdout)
			}
		})
	}
}
