package genimpl_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime/genimpl"
)

// The version range's types carry the versions in their names, which the
// compiler's message shows: they must agree with the constants, and
// MaxVersion is the generator's own version.
func TestVersionNamesAgree(t *testing.T) {
	if genimpl.MaxVersion != genimpl.GenVersion {
		t.Errorf("MaxVersion %d, GenVersion %d: the generator writes the newest version", genimpl.MaxVersion, genimpl.GenVersion)
	}
	for _, c := range []struct {
		v    any
		n    uint
		name string
	}{
		{genimpl.MaxVersion, uint(genimpl.MaxVersion), "UpgradeOrdergenToRunCodeGeneratedAboveVersion%d"},
		{genimpl.MinVersion, uint(genimpl.MinVersion), "RegenerateCodeGeneratedBelowVersion%d"},
	} {
		if got, want := reflect.TypeOf(c.v).Name(), fmt.Sprintf(c.name, c.n); got != want {
			t.Errorf("the type of version %d is %s, want %s (rename it with the bump)", c.n, got, want)
		}
	}
}

// handshake matches the handshake of a generated package: its two
// constants, with the version the code needs.
var handshake = regexp.MustCompile(`const \(\n\t_ = genimpl\.MaxVersion - (\d+)\n\t_ = (\d+) - genimpl\.MinVersion\n\)\n`)

// TestHandshakeRefusesOtherVersions builds the handshake of the example's
// generated code (examples/gen) as code generated for the next version,
// which needs a newer runtime than this one, and as code generated for a
// version below MinVersion, against this module, and checks that both fail
// to compile with a message that says what to do and names the versions.
func TestHandshakeRefusesOtherVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages with the go command")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "gen", "dispatchers.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := handshake.FindSubmatch(src)
	if m == nil {
		t.Fatal("examples/gen/dispatchers.go has no handshake")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != genimpl.GenVersion || string(m[1]) != string(m[2]) {
		t.Fatalf("examples/gen states versions %s and %s, want %d (regenerate it)", m[1], m[2], genimpl.GenVersion)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	build := func(version int) (string, error) {
		v := strconv.Itoa(version)
		code := "package handshake\n\nimport \"github.com/ordergen/ordergen/runtime/genimpl\"\n\n" +
			handshake.ReplaceAllString(string(m[0]), "const (\n\t_ = genimpl.MaxVersion - "+v+"\n\t_ = "+v+" - genimpl.MinVersion\n)\n")
		return buildOverlay(t, root, code)
	}
	if out, err := build(genimpl.GenVersion); err != nil {
		t.Fatalf("the handshake of the current version does not build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name    string
		version int
		want    []string
	}{
		{"newer", genimpl.GenVersion + 1, []string{
			fmt.Sprintf("genimpl.MaxVersion - %d (constant -1 of uint type genimpl.UpgradeOrdergenToRunCodeGeneratedAboveVersion%d) overflows", genimpl.GenVersion+1, genimpl.MaxVersion),
		}},
		{"older", int(genimpl.MinVersion) - 1, []string{
			fmt.Sprintf("%d - genimpl.MinVersion (constant -1 of uint type genimpl.RegenerateCodeGeneratedBelowVersion%d) overflows", genimpl.MinVersion-1, genimpl.MinVersion),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := build(c.version)
			if err == nil {
				t.Fatalf("code of version %d built against a runtime of versions %d to %d", c.version, genimpl.MinVersion, genimpl.MaxVersion)
			}
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("the build says:\n%s\nwant it to say %q", out, want)
				}
			}
		})
	}
}

// buildOverlay builds code as a package of its own inside this module
// (through an overlay: nothing is written into the module) and returns
// what the build says, and its error.
func buildOverlay(t *testing.T, root, code string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "handshake.go")
	if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(root, "runtime", "genimpl", "handshaketest")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkgDir, "handshake.go"): file}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "./runtime/genimpl/handshaketest")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
