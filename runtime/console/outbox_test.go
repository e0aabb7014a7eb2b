package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// outbox is a transport whose stopped keys an operator acts on, as an
// outbox relay's: a key listed is parked with its unsent events.
type outbox struct {
	mu      sync.Mutex
	stopped map[string]int // key -> unsent events
	retried []string
}

func newOutbox(keys map[string]int) *outbox { return &outbox{stopped: keys} }

func (o *outbox) TransportStatus() inspect.TransportStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := inspect.TransportStatus{Kind: "outbox", Name: "outbox of Account"}
	for k, n := range o.stopped {
		st.Partitions = append(st.Partitions, inspect.Partition{Name: "key " + k, Lag: int64(n), Unfinished: n, Parked: n,
			Paused: "parked", Detail: "sink refused <b>", Entity: "Account", Key: k})
	}
	return st
}

func (o *outbox) take(entity, key string) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, ok := o.stopped[key]
	if entity != "Account" || !ok {
		return 0, fmt.Errorf("%w: key %s of %s flows", runtime.ErrNotParked, key, entity)
	}
	delete(o.stopped, key)
	return n, nil
}

func (o *outbox) RetryKey(_ context.Context, entity, key string) (inspect.Result, error) {
	if _, err := o.take(entity, key); err != nil {
		return inspect.Result{}, err
	}
	o.mu.Lock()
	o.retried = append(o.retried, key)
	o.mu.Unlock()
	return inspect.Result{Done: true, Message: "key " + key + " flows again"}, nil
}

func (o *outbox) DiscardKey(_ context.Context, entity, key string) (inspect.Result, error) {
	n, err := o.take(entity, key)
	if err != nil {
		return inspect.Result{}, err
	}
	return inspect.Result{Done: true, Events: n, Message: fmt.Sprintf("discarded %d events of key %s", n, key)}, nil
}

// lagOnly is a transport that takes no action.
type lagOnly struct{}

func (lagOnly) TransportStatus() inspect.TransportStatus {
	return inspect.TransportStatus{Kind: "kafka", Name: "group g", Partitions: []inspect.Partition{{Name: "t/0", Lag: 3}}}
}

func outboxForm(transport, key string) url.Values {
	return url.Values{"transport": {transport}, "entity": {"Account"}, "key": {key}}
}

func TestOutboxKeysAreRetriedAndDiscardedThroughTheAPI(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	ob := newOutbox(map[string]int{"k1": 2, "k2": 3})
	var mu sync.Mutex
	var asked []console.Action
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: []inspect.Transport{lagOnly{}, ob},
		Authorize: func(_ *http.Request, a console.Action) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, a)
			return "alice", nil
		}})
	var o struct {
		Transports []struct {
			Index      int  `json:"index"`
			Actions    bool `json:"actions"`
			Partitions []struct {
				Entity string `json:"entity"`
				Key    string `json:"key"`
			} `json:"partitions"`
		} `json:"transports"`
	}
	site.get(t, "api/overview", &o)
	if len(o.Transports) != 2 || o.Transports[0].Actions || !o.Transports[1].Actions || o.Transports[1].Index != 1 ||
		len(o.Transports[1].Partitions) != 2 || o.Transports[1].Partitions[0].Entity != "Account" {
		t.Fatalf("transports %+v", o.Transports)
	}
	code, _, body := site.post(t, "api/outbox/retry", outboxForm("1", "k1"), nil)
	if code != http.StatusOK || !strings.Contains(body, "k1 flows again") || !strings.Contains(body, `"transport": "outbox of Account"`) {
		t.Fatalf("retry: %d %s", code, body)
	}
	code, _, body = site.post(t, "api/outbox/retry", outboxForm("1", "k1"), nil)
	if code != http.StatusConflict || !strings.Contains(body, "flows") {
		t.Fatalf("retry of a key that flows: %d %s", code, body)
	}
	code, _, body = site.post(t, "api/outbox/discard", outboxForm("1", "k2"), nil)
	if code != http.StatusOK || !strings.Contains(body, `"events": 3`) {
		t.Fatalf("discard: %d %s", code, body)
	}
	mu.Lock()
	if len(asked) != 3 || asked[0] != (console.Action{Verb: "outbox-retry", Entity: "Account", Key: "k1", Transport: "outbox of Account"}) ||
		asked[2].Verb != "outbox-discard" {
		t.Fatalf("the authorizer was asked %+v", asked)
	}
	mu.Unlock()
	for _, want := range []string{"ordergen console: outbox-discard", "who=alice", `transport="outbox of Account"`, "key=k2", "status=done"} {
		if !strings.Contains(site.log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, site.log.String())
		}
	}
}

func TestOutboxMutationsAreRefused(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	ob := newOutbox(map[string]int{"k1": 2})
	transports := []inspect.Transport{lagOnly{}, ob}
	readOnly := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: transports})
	refusing := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: transports,
		Authorize: func(_ *http.Request, a console.Action) (string, error) {
			return "", fmt.Errorf("bob may not %s %s of %s", a.Verb, a.Key, a.Transport)
		}})
	open := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: transports, Authorize: allowAll})
	expectAnswers(t, []posting{
		{"read-only API", readOnly, "api/outbox/retry", outboxForm("1", "k1"), nil, http.StatusForbidden, "read-only"},
		{"read-only form", readOnly, "outbox-discard", outboxForm("1", "k1"), nil, http.StatusForbidden, "read-only"},
		{"unauthorized", refusing, "api/outbox/discard", outboxForm("1", "k1"), nil, http.StatusForbidden, "bob may not outbox-discard k1 of outbox of Account"},
		{"cross-site", open, "api/outbox/discard", outboxForm("1", "k1"), http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden, "cross-origin"},
		{"cross-origin", open, "outbox-retry", outboxForm("1", "k1"), http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden, "cross-origin"},
		{"no transport", open, "api/outbox/retry", url.Values{"entity": {"Account"}, "key": {"k1"}}, nil, http.StatusBadRequest, "needs transport, entity and key"},
		{"a transport of no outbox", open, "api/outbox/retry", outboxForm("0", "k1"), nil, http.StatusNotFound, "no outbox keys"},
		{"no such transport", open, "api/outbox/retry", outboxForm("7", "k1"), nil, http.StatusNotFound, "no transport"},
		{"not a number", open, "api/outbox/retry", outboxForm("one", "k1"), nil, http.StatusNotFound, "no transport"},
	})
	if st := ob.TransportStatus(); len(st.Partitions) != 1 {
		t.Fatalf("a refused mutation changed the outbox: %+v", st)
	}
	for _, path := range []string{"api/outbox/retry", "outbox-discard"} {
		if code := open.get(t, path, nil); code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", path, code)
		}
	}
}

func TestOutboxButtonsOnThePages(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	ob := newOutbox(map[string]int{"<k&1>": 2})
	transports := []inspect.Transport{lagOnly{}, ob}
	readOnly := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: transports})
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Transports: transports, Authorize: allowAll})
	_, body := readOnly.page(t, "")
	if strings.Contains(body, "outbox-retry") || strings.Contains(body, "confirm=discard") {
		t.Fatal("a read-only console shows outbox buttons")
	}
	_, body = site.page(t, "")
	if strings.Count(body, `action="outbox-retry"`) != 1 || !strings.Contains(body, `name="key" value="&lt;k&amp;1&gt;"`) ||
		!strings.Contains(body, `outbox?entity=Account&amp;key=%3Ck%261%3E&amp;transport=1&amp;confirm=discard`) {
		t.Fatalf("the overview's outbox buttons:\n%s", body)
	}
	// Discard asks first, on the key's page.
	code, page := site.page(t, "outbox?entity=Account&key=%3Ck%261%3E&transport=1&confirm=discard")
	if code != http.StatusOK || !strings.Contains(page, `action="outbox-discard"`) || !strings.Contains(page, "Discard 2 events") ||
		!strings.Contains(page, "sink refused &lt;b&gt;") {
		t.Fatalf("the outbox key's page: %d\n%s", code, page)
	}
	code, header, _ := site.post(t, "outbox-discard", outboxForm("1", "<k&1>"), http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if loc := header.Get("Location"); code != http.StatusSeeOther || loc != "./?action=1" {
		t.Fatalf("discard: %d to %q", code, loc)
	}
	_, body = site.page(t, "?action=1")
	if !strings.Contains(body, "outbox-discard</strong> of <code>&lt;k&amp;1&gt;</code> in outbox of Account by alice: discarded 2 events") {
		t.Fatalf("the overview shows no outcome:\n%s", body)
	}
	if _, page := site.page(t, "outbox?entity=Account&key=%3Ck%261%3E&transport=1"); !strings.Contains(page, "The key flows") || strings.Contains(page, "outbox-retry") {
		t.Fatalf("the page of a key that flows:\n%s", page)
	}
	for path, want := range map[string]int{"outbox?entity=Account&key=k": http.StatusBadRequest, "outbox?entity=Account&key=k&transport=9": http.StatusNotFound} {
		if code, _ := site.page(t, path); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}
