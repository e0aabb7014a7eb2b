package asyncapi

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The official parser, @asyncapi/parser (npm), validates documents against
// AsyncAPI's JSON Schema (@asyncapi/specs), the bindings' and payloads'
// schemas and the spec's rules. .ci/asyncapi installs it and
// .ci/asyncapi-validate.js runs it; these tests drive that script when
// ORDERGEN_TEST_ASYNCAPI names the folder it was installed into (CI sets
// it), and skip otherwise.

// parser returns the command that validates files, or skips the test.
func parser(t *testing.T) func(files ...string) (string, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("node and the parser: not under -short")
	}
	dir := os.Getenv("ORDERGEN_TEST_ASYNCAPI")
	if dir == "" {
		t.Skip("ORDERGEN_TEST_ASYNCAPI is not set: .ci/asyncapi install DIR installs @asyncapi/parser into DIR (CI does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("ORDERGEN_TEST_ASYNCAPI is set but there is no node: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "asyncapi-validate.js"))
	if err != nil {
		t.Fatal(err)
	}
	return func(files ...string) (string, error) {
		cmd := exec.Command(node, append([]string{script}, files...)...)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
}

// errorsByFile returns the error diagnostics the script printed, by file.
func errorsByFile(out string) map[string][]string {
	m := make(map[string][]string)
	for _, line := range strings.Split(out, "\n") {
		file, rest, ok := strings.Cut(line, ":")
		if ok && strings.Contains(rest, ": error: ") {
			m[file] = append(m[file], line)
		}
	}
	return m
}

// TestDocumentsPassTheAsyncAPIParser validates the example's committed
// document and the document of every valid golden schema.
func TestDocumentsPassTheAsyncAPIParser(t *testing.T) {
	validate := parser(t)
	dir := t.TempDir()
	files := []string{filepath.Join("..", "..", "examples", "asyncapi.yaml")}
	for path, pkg := range validSchemas(t) {
		doc := mustDocument(t, pkg)
		name := strings.NewReplacer(string(filepath.Separator), "_", ".", "_").Replace(path) + ".yaml"
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	sort.Strings(files)
	out, err := validate(files...)
	if err != nil {
		t.Errorf("the parser refuses documents (%v):\n%s", err, out)
	}
	t.Logf("%d documents validated", len(files))
}

// TestBrokenDocumentsFailTheAsyncAPIParser breaks the example's document
// in ways a hand edit or a generator bug could, and checks that the parser
// refuses each, for the reason expected: the validation above can fail.
func TestBrokenDocumentsFailTheAsyncAPIParser(t *testing.T) {
	validate := parser(t)
	good, err := os.ReadFile(filepath.Join("..", "..", "examples", "asyncapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type breakage struct{ old, new, want string }
	cases := []breakage{
		{"asyncapi: 3.0.0", "asyncapi: 3.0.9", "asyncapi"},
		{"action: send", "action: publish", `"action" property must be equal to one of the allowed values`},
		{"$ref: '#/components/messages/Deposited'", "$ref: '#/components/messages/Deposit'", "invalid-ref"},
		{"is: routingKey", "is: exchange", `"is" property must be equal to one of the allowed values`},
		{"address: '{AccountID}'", "address: '{AccountKey}'", "asyncapi3-channel-parameters"},
		{"fifoQueue: true", "fifoQueue: yes please", `"fifoQueue" property type must be boolean`},
		{"bindingVersion: 0.5.0", "bindingVersion: 0.9.0", `"bindingVersion" property must be equal to one of the allowed values`},
		{"          minimum: 1\n", "          minimum: one\n", `"minimum" property type must be number`},
		{"  version: unversioned\n", "", `"info" property must have required property "version"`},
	}
	var files []string
	for i, c := range cases {
		if !bytes.Contains(good, []byte(c.old)) {
			t.Fatalf("the example's document has no %q", c.old)
		}
		file := filepath.Join(dir, fmt.Sprintf("broken%d.yaml", i))
		if err := os.WriteFile(file, bytes.Replace(good, []byte(c.old), []byte(c.new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	out, err := validate(files...)
	if err == nil {
		t.Fatalf("the parser passes every broken document:\n%s", out)
	}
	errs := errorsByFile(out)
	for i, c := range cases {
		found := false
		for _, e := range errs[files[i]] {
			found = found || strings.Contains(e, c.want)
		}
		if !found {
			t.Errorf("%q -> %q: no error with %q; the parser said:\n%s", c.old, c.new, c.want, strings.Join(errs[files[i]], "\n"))
		}
	}
}
