package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// runningService is a service over a SQLite store whose handler blocks on
// the key stuck (until its context ends) and on the key deaf (ignoring its
// context, until the test ends), with a sqlstore.Server serving the
// operator's requests as a service does.
func runningService(t *testing.T) (path string, store *sqlstore.Store, e *runtime.Engine[string, string]) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "store.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan string, 8), make(chan struct{})
	e, err = runtime.New(func(ctx context.Context, key, _ string) error {
		started <- key
		if key == "deaf" {
			<-release
			return nil
		}
		<-ctx.Done()
		return context.Cause(ctx)
	}, runtime.Config[string, string]{Name: "Account", Timeout: time.Hour, Retry: runtime.Retry{Attempts: 1},
		Parks: durable.EncodedParks[string, string](s.Parks("Account"), textCodec{}), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	srv := &sqlstore.Server[string]{Store: s, Entity: "Account", Operator: e, Every: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	wg.Go(func() { srv.Serve(ctx) })
	t.Cleanup(func() {
		stop()
		wg.Wait()
		close(release)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(cctx)
		s.Close()
	})
	for _, key := range []string{"stuck", "deaf", "deaf"} {
		if err := e.Submit(t.Context(), key, "e"); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	return path, s, e
}

// cancel-attempt and park-now reach the running service through requests,
// and -wait gives their results.
func TestCancelAttemptAndParkNowReachTheService(t *testing.T) {
	path, _, e := runningService(t)
	code, out, errOut := runBinary(t, path, "cancel-attempt", "-wait", "30s", "Account", "stuck")
	if code != exitOK || !strings.HasSuffix(out, "request 1: cancelled the running attempt\n") {
		t.Fatalf("cancel-attempt: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, path, "park-now", "-wait", "30s", "Account", "deaf")
	if code != exitOK || !strings.HasSuffix(out, "request 2: parked 2 events now\n") {
		t.Fatalf("park-now: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, path, "park-now", "-wait", "30s", "Account", "idle")
	if code != exitFail || !strings.Contains(out, "request 3: error: ") || !strings.Contains(out, "no pending event") || !strings.Contains(errOut, "request 3 failed") {
		t.Fatalf("park-now of a key with nothing pending: %d\n%s%s", code, out, errOut)
	}
	// stuck, out of attempts once cancelled, parked; deaf parked now.
	keys, err := e.ParkedKeys(t.Context())
	if err != nil || len(keys) != 2 {
		t.Fatalf("parked %+v %v", keys, err)
	}
	code, out, _ = runBinary(t, path, "list")
	if code != exitOK || !strings.Contains(out, "deaf   2") || !strings.Contains(out, "parked now by operator request 2") ||
		!strings.Contains(out, "operator request 1") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if code, _, errOut := runBinary(t, path, "park-now", "Account"); code != exitUsage || !strings.Contains(errOut, "usage:") {
		t.Fatalf("park-now without a key: %d %s", code, errOut)
	}
}

// The console of serve -actions leaves cancel-attempt and park-now
// requests for any key of an entity the store knows, which the service
// carries out.
func TestServeAsksTheServiceToActOnARunningKey(t *testing.T) {
	path, s, _ := runningService(t)
	// The service keeps its versions in the store: the console knows
	// Account from them.
	if ok, err := s.Versions("Account").CompareAndSet(t.Context(), "other", 0, 1); err != nil || !ok {
		t.Fatalf("store a version: %v %v", ok, err)
	}
	srv := consoleSite(t, s, true)
	res, err := http.Get(srv.URL + "/key?entity=Account&subscriber=Account&key=deaf")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "Ask the running service to:") || !strings.Contains(string(body), `action="cancel-attempt"`) {
		t.Fatalf("the key's page: %d\n%s", res.StatusCode, body)
	}
	code, out := postForm(t, srv, "api/park-now", url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {"deaf"}})
	if code != http.StatusAccepted || !strings.Contains(out, `"status": "requested"`) || !strings.Contains(out, "request 1: park-now deaf in Account") {
		t.Fatalf("park now: %d %s", code, out)
	}
	// The service's Server carries it out.
	if code, out, errOut := runBinary(t, path, "wait", "-timeout", "30s", "1"); code != exitOK || out != "request 1: parked 2 events now\n" {
		t.Fatalf("wait: %d\n%s%s", code, out, errOut)
	}
}
