package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// built is the command, built once for the tests that run it as an
// operator would, through its exit status and output.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary returns the path of the built command; it skips the test when
// there is no go command to build it with.
func binary(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build ordergen-parked with:", err)
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "ordergen-parked-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "ordergen-parked")
		if out, err := exec.Command(goCmd, "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("build ordergen-parked: %v", built.err)
	}
	return built.path
}

// runBinary runs the built command with args and ORDERGEN_STORE=store, and
// returns its exit status and output.
func runBinary(t *testing.T, store string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "ORDERGEN_STORE="+store)
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
	t.Fatalf("run ordergen-parked %v: %v", args, err)
	return 0, "", ""
}

type textCodec struct{}

func (textCodec) Encode(e string) (string, []byte, error) {
	return "Text", []byte(`{"text":"` + e + `"}`), nil
}
func (textCodec) Decode(_ string, data []byte) (string, error) {
	return strings.TrimSuffix(strings.TrimPrefix(string(data), `{"text":"`), `"}`), nil
}

// fixture is a service with the key acct-1 parked (two events) in the
// namespace Account of a SQLite store, which the command reads from
// another process.
type fixture struct {
	path    string
	store   *sqlstore.Store
	engine  *runtime.Engine[string, string]
	mu      sync.Mutex // guards handled and broken, which the engine's worker uses
	handled []string
	broken  bool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{path: filepath.Join(t.TempDir(), "store.db"), broken: true}
	s, err := sqlite.Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	f.store = s
	f.engine, err = runtime.New(func(_ context.Context, key, e string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.broken {
			return runtime.Permanent(errors.New("database is read-only"))
		}
		f.handled = append(f.handled, key+":"+e)
		return nil
	}, runtime.Config[string, string]{
		MaxActive: 1,
		Parks:     durable.EncodedParks[string, string](s.Parks("Account"), textCodec{}),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.engine.Close(context.Background())
		s.Close()
	})
	for _, e := range []string{"opened", "deposited"} {
		if err := f.engine.Submit(ctx, "acct-1", e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.engine.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// tool runs the built command on the fixture's store.
func (f *fixture) tool(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBinary(t, f.path, args...)
}

// fix makes the handler succeed from now on.
func (f *fixture) fix() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken = false
}

func (f *fixture) handledEvents() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.handled, " ")
}

// serve carries out the pending requests once, as the running service's
// sqlstore.Server does, and returns how many it finished.
func (f *fixture) serve(t *testing.T) int {
	t.Helper()
	srv := &sqlstore.Server[string]{Store: f.store, Entity: "Account", Operator: f.engine, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := srv.ServeOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestListAndShow(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.tool(t, "list")
	if code != exitOK || !strings.HasPrefix(out, "NAMESPACE  KEY     EVENTS  SINCE") || !strings.Contains(out, "Account    acct-1  2") || !strings.Contains(out, "database is read-only") {
		t.Fatalf("list: %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "REQUEST") {
		t.Errorf("list shows requests while none is pending:\n%s", out)
	}
	code, out, errOut = f.tool(t, "show", "Account", "acct-1")
	if code != exitOK {
		t.Fatalf("show: %d %s", code, errOut)
	}
	for _, want := range []string{"seq 1  Text  attempts 1", "error: permanent: database is read-only", `{"text":"opened"}`, "seq 2  Text", `{"text":"deposited"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

// TestNamesThatDoNotMatchAreErrors: a namespace or key the store does not
// know is an error naming the closest one (case ignored), never an empty
// answer; replay and discard of such a name leave no request.
func TestNamesThatDoNotMatchAreErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "account"}, `ordergen-parked list: namespace account holds nothing in this store (did you mean Account?)` + "\n"},
		{[]string{"list", "Nothing"}, `ordergen-parked list: namespace Nothing holds nothing in this store (namespaces: Account)` + "\n"},
		{[]string{"show", "Acount", "acct-1"}, `ordergen-parked show: namespace Acount holds nothing in this store (did you mean Account?)` + "\n"},
		{[]string{"show", "Account", "acct1"}, `ordergen-parked show: key acct1 is not parked in Account (did you mean acct-1?)` + "\n"},
		{[]string{"show", "Account", "zzz-9"}, `ordergen-parked show: key zzz-9 is not parked in Account (1 keys are parked there: ordergen-parked list Account)` + "\n"},
		{[]string{"replay", "ACCOUNT", "acct-1"}, `ordergen-parked replay: namespace ACCOUNT holds nothing in this store (did you mean Account?)` + "\n"},
		{[]string{"discard", "Account/audit", "acct-1"}, `ordergen-parked discard: namespace Account/audit holds nothing in this store (namespaces: Account)` + "\n"},
		{[]string{"replay", "Account", "ACCT-1"}, `ordergen-parked replay: key ACCT-1 is not parked in Account (did you mean acct-1?)` + "\n"},
	} {
		code, out, errOut := f.tool(t, tc.args...)
		if code != exitFail || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q\nstderr %q\nwant   %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if reqs, err := f.store.Requests(t.Context(), 10); err != nil || len(reqs) != 0 {
		t.Errorf("requests were made for names that do not match: %+v, %v", reqs, err)
	}
	// A command misspelt gets the same help.
	if code, _, errOut := f.tool(t, "lst"); code != exitUsage || !strings.Contains(errOut, `unknown command "lst" (did you mean list?)`) {
		t.Errorf("lst: %d %s", code, errOut)
	}
}

// TestMissingSQLiteFileIsAnError: a SQLite path that does not exist is an
// error naming it, and the file is not created; -create makes an empty
// store there.
func TestMissingSQLiteFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.db")
	for _, args := range [][]string{{"-store", path, "list"}, {"-store", "sqlite:" + path, "requests"}} {
		code, out, errOut := runBinary(t, "", args...)
		want := "ordergen-parked: no SQLite store at " + path + ": the file does not exist (check -store or $ORDERGEN_STORE; -create makes an empty store there)\n"
		if code != exitFail || out != "" || errOut != want {
			t.Errorf("%q: exit %d, stdout %q\nstderr %q\nwant   %q", args, code, out, errOut, want)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%q created the file: %v", args, err)
		}
	}
	code, out, errOut := runBinary(t, path, "-create", "list")
	if code != exitOK || out != "no key is parked, and no subscriber has versions or states in this store\n" {
		t.Errorf("-create list: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("-create made no file: %v", err)
	}
	if code, out, _ := runBinary(t, path, "list"); code != exitOK || !strings.HasPrefix(out, "no key is parked") {
		t.Errorf("list of the new store: %d %s", code, out)
	}
}

func TestReplayIsCarriedOutByTheService(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.tool(t, "replay", "Account", "acct-1")
	if code != exitOK || out != "request 1: replay acct-1 in Account, for the running service to carry out (ordergen-parked wait 1; ordergen-parked cancel 1 withdraws it)\n" {
		t.Fatalf("replay: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := f.tool(t, "requests"); code != exitOK || !strings.Contains(out, "pending: no service has taken it up") {
		t.Fatalf("requests before the service: %d\n%s", code, out)
	}
	// list shows the pending request with its age.
	code, out, _ = f.tool(t, "list", "Account")
	pending := regexp.MustCompile(`\nREQUEST  ACTION  NAMESPACE  KEY     AGE +STATE\n1        replay  Account    acct-1  [0-9.]+m?s +pending: no service has taken it up \(ordergen-parked cancel 1 withdraws it\)\n$`)
	if code != exitOK || !pending.MatchString(out) {
		t.Fatalf("list with a pending request: %d\n%s", code, out)
	}
	f.fix()
	if n := f.serve(t); n != 1 {
		t.Fatalf("the service carried out %d requests, want 1", n)
	}
	if code, out, errOut := f.tool(t, "wait", "1"); code != exitOK || out != "request 1: replayed\n" {
		t.Fatalf("wait: %d\n%s%s", code, out, errOut)
	}
	if got := f.handledEvents(); got != "acct-1:opened acct-1:deposited" {
		t.Fatalf("handled %q", got)
	}
	// (The fixture keeps versions in memory: with the key unparked, the
	// store holds nothing for Account.)
	if code, out, _ := f.tool(t, "list"); code != exitOK || out != "no key is parked, and no subscriber has versions or states in this store\n" {
		t.Fatalf("list after the replay: %d\n%q", code, out)
	}
	if ok, err := f.store.Versions("Account").CompareAndSet(t.Context(), "acct-1", 0, 2); err != nil || !ok {
		t.Fatalf("store a version: %v, %v", ok, err)
	}
	if code, out, _ := f.tool(t, "list"); code != exitOK || out != "no key is parked (namespaces in this store: Account)\n" {
		t.Fatalf("list with a version stored: %d\n%q", code, out)
	}
	// A key no longer parked cannot be asked for again.
	if code, _, errOut := f.tool(t, "discard", "Account", "acct-1"); code != exitFail || errOut != "ordergen-parked discard: key acct-1 is not parked in Account (nothing is parked there)\n" {
		t.Fatalf("discard of a key no longer parked: %d %s", code, errOut)
	}
	// A cancelled request cannot be cancelled or carried out any more.
	if code, _, errOut := f.tool(t, "cancel", "1"); code != exitFail || !strings.Contains(errOut, "request 1 cannot be cancelled: it is finished (replayed)") {
		t.Fatalf("cancel of a finished request: %d %s", code, errOut)
	}
}

// TestTimedOutRequestIsCancelled: a replay whose wait gives up before any
// service took it up is cancelled, so that a service started later does
// not carry it out behind the operator's back.
func TestTimedOutRequestIsCancelled(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.tool(t, "replay", "-wait", "1ms", "Account", "acct-1")
	want := "ordergen-parked replay: request 1 not done after 1ms: no running service for Account took it up, so it is cancelled and no service will carry it out later (start the service with a sqlstore.Server for the entity, then ask again)\n"
	if code != exitFail || out != "request 1: replay acct-1 in Account, for the running service to carry out; waiting up to 1ms\n" || errOut != want {
		t.Fatalf("replay -wait without a service: exit %d\nstdout %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
	f.fix()
	if n := f.serve(t); n != 0 {
		t.Fatalf("the service carried out %d requests after the wait gave up", n)
	}
	if got := f.handledEvents(); got != "" {
		t.Fatalf("handled %q: the cancelled replay ran", got)
	}
	if code, out, _ := f.tool(t, "list"); code != exitOK || !strings.Contains(out, "acct-1  2") || strings.Contains(out, "REQUEST") {
		t.Fatalf("list after the cancelled replay: the key is still parked, nothing pending:\n%s", out)
	}
	if code, out, _ := f.tool(t, "requests"); code != exitOK || !strings.Contains(out, "cancelled: the command that asked gave up waiting (not done after 1ms)") {
		t.Fatalf("requests: %d\n%s", code, out)
	}
	if code, out, errOut := f.tool(t, "wait", "1"); code != exitFail || !strings.Contains(errOut, "request 1 was cancelled") || !strings.HasPrefix(out, "request 1: cancelled:") {
		t.Fatalf("wait for a cancelled request: %d\n%s%s", code, out, errOut)
	}
}

// TestCancel: a request left pending is withdrawn by cancel, and wait
// giving up on it leaves it pending (it is not the wait's own).
func TestCancel(t *testing.T) {
	f := newFixture(t)
	if code, _, errOut := f.tool(t, "discard", "Account", "acct-1"); code != exitOK {
		t.Fatalf("discard: %s", errOut)
	}
	code, _, errOut := f.tool(t, "wait", "-timeout", "1ms", "1")
	if code != exitFail || errOut != "ordergen-parked wait: request 1 not done after 1ms: no running service for Account has taken it up; it stays pending (ordergen-parked cancel 1 withdraws it)\n" {
		t.Fatalf("wait -timeout: exit %d %q", code, errOut)
	}
	if code, out, errOut := f.tool(t, "cancel", "1"); code != exitOK || out != "request 1 (discard acct-1 in Account) cancelled: no service will carry it out\n" {
		t.Fatalf("cancel: exit %d\n%s%s", code, out, errOut)
	}
	if n := f.serve(t); n != 0 {
		t.Fatalf("the service carried out %d cancelled requests", n)
	}
	if code, out, _ := f.tool(t, "list"); code != exitOK || !strings.Contains(out, "acct-1  2") {
		t.Fatalf("the key is no longer parked after a cancelled discard:\n%s", out)
	}
	if code, _, errOut := f.tool(t, "cancel", "7"); code != exitFail || !strings.Contains(errOut, "no such request") {
		t.Errorf("cancel of an unknown request: %d %s", code, errOut)
	}
}

func TestUsage(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{
		{},
		{"rewind"},
		{"show", "Account"},
		{"list", "a", "b"},
		{"wait", "seven"},
		{"cancel"},
		{"cancel", "one"},
		{"replay", "-wait", "soon", "Account", "k"},
	} {
		if code, _, errOut := f.tool(t, args...); code != exitUsage || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, want %d with the usage\n%s", args, code, exitUsage, errOut)
		}
	}
	if code, _, errOut := runBinary(t, "", "list"); code != exitUsage || !strings.Contains(errOut, "no store") {
		t.Errorf("no store: %d %s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "missing", "dir", "x.db")
	if code, _, _ := runBinary(t, bad, "-create", "list"); code != exitFail {
		t.Errorf("a store that cannot open: %d", code)
	}
	for _, args := range [][]string{{"help"}, {"-h"}} {
		if code, out, _ := f.tool(t, args...); code != exitOK || !strings.Contains(out, "usage:") || !strings.Contains(out, "cancel ID") {
			t.Errorf("%q: %d %s", args, code, out)
		}
	}
}
