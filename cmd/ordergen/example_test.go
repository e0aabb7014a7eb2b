package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleLeavesSomethingToOperate follows the README's example (the
// blocks of flow example, as written) in a folder that holds the
// checkout's files, so that what the example writes lands there: the example, then
// the ordergen-parked list that shows the account it leaves parked on
// purpose; then the console of ordergen-parked serve, over the same store,
// shows that account too.
func TestExampleLeavesSomethingToOperate(t *testing.T) {
	env := goEnv(t)
	if testing.Short() {
		t.Skip("runs the example and ordergen-parked with the go command")
	}
	// It runs the go command most of its time, as the other tests that
	// build a module do: they overlap their waits.
	t.Parallel()
	root := repoRoot(t)
	top := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" || e.Name() == "ledger.db" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(top, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	r := &flowRunner{t: t, dir: top, env: env}
	var outputs []string
	for _, s := range docFlow(t, "example") {
		outputs = append(outputs, r.step(s))
	}
	report, list := outputs[0], outputs[1]
	if !strings.Contains(report, "left     acct-review v3 refused") || !strings.Contains(report, "go run ./cmd/ordergen-parked -store ledger.db list\n") {
		t.Errorf("the example's report does not say what it leaves parked, and how to see it:\n%s", report)
	}
	if !strings.Contains(list, "Account    acct-review  4 ") || !strings.Contains(list, "compliance review") {
		t.Errorf("ordergen-parked list does not show the key the example leaves parked:\n%s", list)
	}

	// The console, as ordergen-parked serve gives it over the store.
	bin := filepath.Join(t.TempDir(), "ordergen-parked")
	r.run("go", "build", "-o", bin, "./cmd/ordergen-parked")
	serve := exec.Command(bin, "-store", filepath.Join(top, "ledger.db"), "serve", "-addr", "127.0.0.1:0")
	serve.Stderr = os.Stderr
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	first, firstErr := lines.ReadString('\n')
	logged := make(chan struct{})
	go func() { // its log, until it ends
		defer close(logged)
		_, _ = io.Copy(io.Discard, lines)
	}()
	defer func() {
		if err := serve.Process.Signal(os.Interrupt); err != nil {
			_ = serve.Process.Kill()
		}
		<-logged
		_ = serve.Wait()
	}()
	if firstErr != nil {
		t.Fatalf("ordergen-parked serve said %q: %v", first, firstErr)
	}
	url, ok := strings.CutPrefix(first, "console at ")
	url, _, _ = strings.Cut(url, " ")
	if !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("ordergen-parked serve did not say where it serves: %q", first)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	for _, want := range []string{"acct-review", "compliance review"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the console's overview lacks %q", want)
		}
	}
}
