package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTracingDocOutsideTheRepository runs docs/tracing.md's blocks (flow
// tracing, as written) in a new module outside this repository, which takes
// ordergen from this checkout through the replace line: the program
// handles an event in the trace its sender's context carried, and its
// go.mod names the OpenTelemetry trace API it imports.
func TestTracingDocOutsideTheRepository(t *testing.T) {
	env := goEnv(t)
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	t.Parallel()
	top := checkoutDir(t, "ordergen-tracing")
	if err := os.Symlink(repoRoot(t), filepath.Join(top, "ordergen")); err != nil {
		t.Fatal(err)
	}
	r := &flowRunner{t: t, dir: top, env: env}
	var outputs []string
	for _, s := range docFlow(t, "tracing") {
		outputs = append(outputs, r.step(s))
	}
	if all := strings.Join(outputs, ""); !strings.Contains(all, "handled in the sender's trace: true\n") {
		t.Errorf("the tracing page's program did not handle its event in the sender's trace:\n%s", all)
	}
	mod, err := os.ReadFile(filepath.Join(r.dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "go.opentelemetry.io/otel/trace") {
		t.Errorf("go.mod of the traced program lacks go.opentelemetry.io/otel/trace:\n%s", mod)
	}
}
