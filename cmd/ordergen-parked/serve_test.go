package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// storeSite is the console over the fixture's store on a test server.
func storeSite(t *testing.T, f *fixture, actions bool) *httptest.Server {
	t.Helper()
	return consoleSite(t, f.store, actions)
}

// consoleSite is serve's console over s on a test server, which the test's
// end closes.
func consoleSite(t *testing.T, s *sqlstore.Store, actions bool) *httptest.Server {
	t.Helper()
	c, err := storeConsole(s, actions, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv
}

func getJSON(t *testing.T, srv *httptest.Server, path string, v any) int {
	t.Helper()
	res, err := http.Get(srv.URL + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return res.StatusCode
}

func postForm(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, string) {
	t.Helper()
	res, err := http.PostForm(srv.URL+"/"+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func TestServeShowsTheStoresParks(t *testing.T) {
	f := newFixture(t)
	srv := storeSite(t, f, false)
	var o struct {
		Entities []struct {
			Entity      string
			Subscribers []struct {
				Name         string
				Live         bool
				ParkedKeys   int `json:"parked_keys"`
				ParkedEvents int `json:"parked_events"`
				Parked       []struct {
					Key, Reason, Error string
					Attempts           int
				}
			}
		}
	}
	getJSON(t, srv, "api/overview", &o)
	if len(o.Entities) != 1 || o.Entities[0].Entity != "Account" || len(o.Entities[0].Subscribers) != 1 {
		t.Fatalf("overview: %+v", o)
	}
	sub := o.Entities[0].Subscribers[0]
	if sub.Live || sub.ParkedKeys != 1 || sub.ParkedEvents != 2 || len(sub.Parked) != 1 || sub.Parked[0].Key != "acct-1" ||
		!strings.Contains(sub.Parked[0].Reason, "database is read-only") || sub.Parked[0].Attempts != 1 {
		t.Fatalf("subscriber: %+v", sub)
	}
	var events struct {
		Events []struct {
			Seq  uint64
			Name string
			Data map[string]string
		}
	}
	getJSON(t, srv, "api/events?entity=Account&subscriber=Account&key=acct-1&limit=1", &events)
	if len(events.Events) != 1 || events.Events[0].Name != "Text" || events.Events[0].Data["text"] != "opened" {
		t.Fatalf("events: %+v", events)
	}
	// Read-only: no request is made.
	if code, body := postForm(t, srv, "api/replay", url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {"acct-1"}}); code != http.StatusForbidden {
		t.Fatalf("replay on a read-only console: %d %s", code, body)
	}
	if reqs, err := f.store.Requests(t.Context(), 10); err != nil || len(reqs) != 0 {
		t.Fatalf("requests %v %v", reqs, err)
	}
	// A subscriber of another entity is not this one's.
	var e map[string]string
	if code := getJSON(t, srv, "api/events?entity=Account&subscriber=Order&key=acct-1", &e); code != http.StatusNotFound {
		t.Fatalf("another entity's namespace: %d %v", code, e)
	}
}

func TestServeLeavesRequestsForTheService(t *testing.T) {
	f := newFixture(t)
	srv := storeSite(t, f, true)
	form := url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {"acct-1"}}
	code, body := postForm(t, srv, "api/replay", form)
	if code != http.StatusAccepted || !strings.Contains(body, `"status": "requested"`) || !strings.Contains(body, "request 1: replay acct-1 in Account") {
		t.Fatalf("replay: %d %s", code, body)
	}
	f.fix()
	if n := f.serve(t); n != 1 {
		t.Fatalf("the service carried out %d requests", n)
	}
	if got := f.handledEvents(); got != "acct-1:opened acct-1:deposited" {
		t.Fatalf("handled %q", got)
	}
	var o struct {
		Entities []struct {
			Requests []struct {
				ID     int64
				Action string
				Result string
			}
		}
	}
	getJSON(t, srv, "api/overview", &o)
	if len(o.Entities) != 1 || len(o.Entities[0].Requests) != 1 || o.Entities[0].Requests[0].Result != "replayed" {
		t.Fatalf("requests after the service: %+v", o)
	}
	// The key is no longer parked: a request would fail, so none is made.
	if code, body := postForm(t, srv, "api/discard", form); code != http.StatusConflict || !strings.Contains(body, "not parked") {
		t.Fatalf("discard of a key no longer parked: %d %s", code, body)
	}
}

func TestServeCommand(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		var errOut strings.Builder
		code <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, pw, &errOut, f.path)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	addr, _, ok := strings.Cut(strings.TrimPrefix(line, "console at "), " ")
	if !ok || !strings.HasPrefix(addr, "http://127.0.0.1:") || !strings.Contains(line, "read-only") {
		t.Fatalf("serve printed %q", line)
	}
	res, err := http.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "acct-1") || strings.Contains(string(body), "<button") {
		t.Fatalf("the console's page: %d\n%s", res.StatusCode, body)
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Fatalf("serve exited %d", c)
	}
	if c, _, errOut := f.tool(t, "serve", "extra"); c != exitUsage || !strings.Contains(errOut, "usage:") {
		t.Fatalf("serve with an argument: %d %s", c, errOut)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
