package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type textCodec struct{}

func (textCodec) Encode(e string) (string, []byte, error) {
	return "Text", []byte(`{"text":"` + e + `"}`), nil
}
func (textCodec) Decode(_ string, data []byte) (string, error) {
	return strings.TrimSuffix(strings.TrimPrefix(string(data), `{"text":"`), `"}`), nil
}

// fixture is a service with the key acct-1 parked (two events) in the
// namespace Account of a SQLite store.
type fixture struct {
	path    string
	store   *sqlstore.Store
	engine  *runtime.Engine[string, string]
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

// tool runs the command and returns its exit status and output.
func (f *fixture) tool(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, &out, &errOut, f.path)
	return code, out.String(), errOut.String()
}

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
	if code != exitOK || !strings.Contains(out, "Account") || !strings.Contains(out, "acct-1") || !strings.Contains(out, "database is read-only") {
		t.Fatalf("list: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := f.tool(t, "list", "Nothing"); code != exitOK || strings.Contains(out, "acct-1") {
		t.Fatalf("list of another namespace: %d\n%s", code, out)
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
	if code, _, errOut := f.tool(t, "show", "Account", "acct-9"); code != exitFail || !strings.Contains(errOut, "not parked") {
		t.Fatalf("show of a key not parked: %d %s", code, errOut)
	}
}

func TestReplayIsCarriedOutByTheService(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.tool(t, "replay", "Account", "acct-1")
	if code != exitOK || !strings.Contains(out, "request 1: replay acct-1 in Account") {
		t.Fatalf("replay: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := f.tool(t, "requests"); code != exitOK || !strings.Contains(out, "pending") {
		t.Fatalf("requests before the service: %d\n%s", code, out)
	}
	f.broken = false
	if n := f.serve(t); n != 1 {
		t.Fatalf("the service carried out %d requests, want 1", n)
	}
	if code, out, errOut := f.tool(t, "wait", "1"); code != exitOK || !strings.Contains(out, "request 1: replayed") {
		t.Fatalf("wait: %d\n%s%s", code, out, errOut)
	}
	if got := strings.Join(f.handled, " "); got != "acct-1:opened acct-1:deposited" {
		t.Fatalf("handled %q", got)
	}
	if code, out, _ := f.tool(t, "list"); code != exitOK || strings.Contains(out, "acct-1") {
		t.Fatalf("list after the replay: %d\n%s", code, out)
	}
	// A discard of a key that is no longer parked fails, and says so.
	if code, _, _ := f.tool(t, "discard", "Account", "acct-1"); code != exitOK {
		t.Fatalf("discard request: %d", code)
	}
	f.serve(t)
	if code, out, _ := f.tool(t, "wait", "2"); code != exitFail || !strings.Contains(out, "error:") {
		t.Fatalf("wait for a failed request: %d\n%s", code, out)
	}
}

func TestWaitGivesUp(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.tool(t, "discard", "-wait", "1ms", "Account", "acct-1")
	if code != exitFail || !strings.Contains(errOut, "not done after 1ms") || !strings.Contains(errOut, "no running service") {
		t.Fatalf("discard -wait without a service: %d\n%s%s", code, out, errOut)
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
		{"replay", "-wait", "soon", "Account", "k"},
	} {
		if code, _, errOut := f.tool(t, args...); code != exitUsage || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, want %d with the usage\n%s", args, code, exitUsage, errOut)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"list"}, &out, &errOut, ""); code != exitUsage || !strings.Contains(errOut.String(), "no store") {
		t.Errorf("no store: %d %s", code, errOut.String())
	}
	bad := filepath.Join(t.TempDir(), "missing", "dir", "x.db")
	if code := run(t.Context(), []string{"-store", bad, "list"}, &out, &errOut, ""); code != exitFail {
		t.Errorf("a store that cannot open: %d", code)
	}
	if code, out, _ := f.tool(t, "help"); code != exitOK || !strings.Contains(out, "usage:") {
		t.Errorf("help: %d %s", code, out)
	}
}
