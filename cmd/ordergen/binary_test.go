package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtBinary is the ordergen command built once for the tests that run
// it as a user would, through its exit status and output.
type builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// built is the binary of this test run; TestMain removes it.
var built builtBinary

func (b *builtBinary) remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// ordergenBinary returns the path of the built command. It skips the test
// when there is no go command to build it with.
func ordergenBinary(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build ordergen with:", err)
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "ordergen-cli-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "ordergen")
		out, err := exec.Command(goCmd, "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if built.err != nil {
		t.Fatalf("build ordergen: %v", built.err)
	}
	return built.path
}

// runBinary runs the built command in dir with args and returns its exit
// status and output.
func runBinary(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(ordergenBinary(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run ordergen %v: %v", args, err)
	return 0, "", ""
}
