package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

type overviewDoc struct {
	ReadOnly bool `json:"read_only"`
	Entities []struct {
		Entity      string `json:"entity"`
		Subscribers []struct {
			Name  string `json:"name"`
			Live  bool   `json:"live"`
			Stats struct {
				Handled    uint64 `json:"handled"`
				Discarded  uint64 `json:"discarded"`
				Parked     int64  `json:"parked"`
				ParkedKeys int64  `json:"parked_keys"`
				Pending    int64  `json:"pending"`
			} `json:"stats"`
			Backlog []struct {
				Key              string  `json:"key"`
				Pending          int     `json:"pending"`
				OldestAgeSeconds float64 `json:"oldest_age_seconds"`
			} `json:"backlog"`
			Stuck      []struct{ Key string } `json:"stuck"`
			ParkedKeys int                    `json:"parked_keys"`
			Parked     []parkedKeyDoc         `json:"parked"`
		} `json:"subscribers"`
	} `json:"entities"`
	Transports []struct {
		Kind       string `json:"kind"`
		Partitions []struct {
			Name   string `json:"name"`
			Lag    int64  `json:"lag"`
			Paused string `json:"paused"`
		} `json:"partitions"`
	} `json:"transports"`
}

type parkedKeyDoc struct {
	Key      string `json:"key"`
	Reason   string `json:"reason"`
	Events   int    `json:"events"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

type eventsDoc struct {
	Events []struct {
		Seq      uint64         `json:"seq"`
		Name     string         `json:"name"`
		Data     map[string]any `json:"data"`
		Error    string         `json:"error"`
		Attempts int            `json:"attempts"`
	} `json:"events"`
	Next uint64 `json:"next"`
}

type actionDoc struct {
	ID      int64  `json:"id"`
	Who     string `json:"who"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Events  int    `json:"events"`
	Error   string `json:"error"`
}

func TestOverviewShowsAParkedKeyWithItsReasonAndAttempts(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{Retry: runtime.Retry{Attempts: 3, Initial: time.Microsecond, Max: time.Microsecond}})
	s.park(t, "acct-7", 3)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	var o overviewDoc
	if code := site.get(t, "api/overview", &o); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if !o.ReadOnly || len(o.Entities) != 1 || len(o.Entities[0].Subscribers) != 1 {
		t.Fatalf("overview: %+v", o)
	}
	sub := o.Entities[0].Subscribers[0]
	if sub.Name != "Account" || !sub.Live || sub.ParkedKeys != 1 || sub.Stats.Parked != 3 || len(sub.Parked) != 1 {
		t.Fatalf("subscriber: %+v", sub)
	}
	// Retry is not Permanent-proof here: a permanent error is tried once.
	pk := sub.Parked[0]
	if pk.Key != "acct-7" || pk.Events != 3 || pk.Attempts != 1 || !strings.Contains(pk.Reason, "ledger database is read-only") ||
		!strings.Contains(pk.Error, "ledger database is read-only") {
		t.Fatalf("parked key: %+v", pk)
	}
}

func TestBacklogAndStuckKeys(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	e, err := runtime.New(func(ctx context.Context, key string, d deposit) error {
		if key == "hot" {
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
		}
		return nil
	}, runtime.Config[string, deposit]{Name: "Account", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	defer close(release)
	for i := range 5 {
		if err := e.Submit(t.Context(), "hot", deposit{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	in := inspect.Engines[string, deposit]{Name: "Account", Engines: func() []*runtime.Engine[string, deposit] { return []*runtime.Engine[string, deposit]{e} }}
	// A StuckAfter of a nanosecond: the held key is stuck by any clock.
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{in}, StuckAfter: time.Nanosecond})
	var o overviewDoc
	site.get(t, "api/overview", &o)
	sub := o.Entities[0].Subscribers[0]
	if len(sub.Backlog) != 1 || sub.Backlog[0].Key != "hot" || sub.Backlog[0].Pending != 5 || sub.Backlog[0].OldestAgeSeconds <= 0 {
		t.Fatalf("backlog: %+v", sub.Backlog)
	}
	if len(sub.Stuck) != 1 || sub.Stuck[0].Key != "hot" {
		t.Fatalf("stuck: %+v", sub.Stuck)
	}
	_, body := site.page(t, "")
	if !strings.Contains(body, "1 stuck") || !strings.Contains(body, "Largest backlog") {
		t.Fatalf("the page shows no stuck key:\n%s", body)
	}
	// The key's page says how many events wait and since when.
	var k struct {
		Live             bool    `json:"live"`
		Pending          int     `json:"pending"`
		OldestAgeSeconds float64 `json:"oldest_age_seconds"`
		Stuck            bool    `json:"stuck"`
	}
	if code := site.get(t, "api/key?entity=Account&subscriber=Account&key=hot", &k); code != http.StatusOK ||
		!k.Live || k.Pending != 5 || k.OldestAgeSeconds <= 0 || !k.Stuck {
		t.Fatalf("api/key of the stuck key: %d %+v", code, k)
	}
	_, body = site.page(t, "key?entity=Account&subscriber=Account&key=hot")
	if !strings.Contains(body, "<dt>pending events</dt><dd>5</dd>") || !strings.Contains(body, `<span class="badge warn">stuck</span>`) {
		t.Fatalf("the stuck key's page:\n%s", body)
	}
}

// Paging over a park of 10,000 events: every event once, in order, a page
// at a time, each page the store's paged read.
func TestPagingOverTenThousandParkedEvents(t *testing.T) {
	const n = 10000
	parks := runtime.NewMemoryParkStore[string, deposit]()
	events := make([]runtime.ParkedEvent[deposit], n)
	for i := range events {
		events[i] = runtime.ParkedEvent[deposit]{Event: deposit{Seq: i + 1, Amount: int64(i)}, Attempts: 1, At: time.Now()}
	}
	events[0].Err = "permanent: ledger database is read-only"
	if err := parks.Append(t.Context(), "acct-big", "failed: ledger database is read-only", events); err != nil {
		t.Fatal(err)
	}
	s := newService(t, runtime.Config[string, deposit]{Parks: parks})
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})

	for _, limit := range []int{1000, 333} {
		var seqs []int
		pages := 0
		for after := uint64(0); ; pages++ {
			var page eventsDoc
			path := fmt.Sprintf("api/events?entity=Account&subscriber=Account&key=acct-big&after=%d&limit=%d", after, limit)
			if code := site.get(t, path, &page); code != http.StatusOK {
				t.Fatalf("%s: %d", path, code)
			}
			if len(page.Events) > limit {
				t.Fatalf("a page of %d events, limit %d", len(page.Events), limit)
			}
			for _, ev := range page.Events {
				seqs = append(seqs, int(ev.Data["seq"].(float64)))
			}
			if page.Next == 0 {
				break
			}
			if page.Next != page.Events[len(page.Events)-1].Seq {
				t.Fatalf("next %d is not the last seq of the page", page.Next)
			}
			after = page.Next
		}
		if len(seqs) != n || !slices.IsSorted(seqs) || seqs[0] != 1 || seqs[n-1] != n {
			t.Fatalf("limit %d: read %d events (first %v), want 1..%d in order", limit, len(seqs), seqs[:min(3, len(seqs))], n)
		}
		if want := (n + limit - 1) / limit; pages+1 != want {
			t.Fatalf("limit %d: %d pages, want %d", limit, pages+1, want)
		}
	}
	// The first event carries the error; the key's page shows the first 50.
	var first eventsDoc
	site.get(t, "api/events?entity=Account&subscriber=Account&key=acct-big&limit=1", &first)
	if first.Events[0].Error == "" || first.Events[0].Name == "" || first.Next != 1 {
		t.Fatalf("first page: %+v", first)
	}
	_, body := site.page(t, "key?entity=Account&subscriber=Account&key=acct-big&after=9950")
	if strings.Count(body, `<li class="event">`) != 50 || !strings.Contains(body, "#10000") || strings.Contains(body, "Next page") {
		t.Fatalf("the last page of the key's events is wrong")
	}
}

func TestParkedKeysArePaged(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	var keys []string
	for i := range 25 {
		key := fmt.Sprintf("acct-%02d", i)
		keys = append(keys, key)
		s.park(t, key, 1)
	}
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	var got []string
	for offset := 0; offset < 30; offset += 10 {
		var page struct {
			Total int            `json:"total"`
			Keys  []parkedKeyDoc `json:"keys"`
		}
		site.get(t, fmt.Sprintf("api/parked?entity=Account&subscriber=Account&offset=%d&limit=10", offset), &page)
		if page.Total != 25 {
			t.Fatalf("total %d", page.Total)
		}
		for _, k := range page.Keys {
			got = append(got, k.Key)
		}
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("parked keys %v, want %v (oldest park first)", got, keys)
	}
	var o overviewDoc
	site.get(t, "api/overview", &o)
	if n := len(o.Entities[0].Subscribers[0].Parked); n != 20 {
		t.Fatalf("the overview lists %d parked keys, want the first 20", n)
	}
	_, body := site.page(t, "")
	if !strings.Contains(body, "All 25 parked keys") {
		t.Fatalf("the overview links no page of all parked keys")
	}
}

func TestReplayThroughTheAPI(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	s.park(t, "acct-1", 4)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	s.setBroken("acct-1", false)
	code, _, body := site.post(t, "api/replay", keyForm("acct-1"), nil)
	if code != http.StatusOK {
		t.Fatalf("replay: %d %s", code, body)
	}
	if got := s.handled("acct-1"); !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("handled %v, want 1 2 3 4 in order", got)
	}
	if st := s.engine.Stats(); st.ParkedKeys != 0 || st.Replayed != 4 {
		t.Fatalf("after the replay: %+v", st)
	}
	var actions struct{ Actions []actionDoc }
	site.get(t, "api/actions", &actions)
	if len(actions.Actions) != 1 || actions.Actions[0].Who != "alice" || actions.Actions[0].Status != "done" {
		t.Fatalf("actions: %+v", actions)
	}
	for _, want := range []string{"ordergen console: replay", "who=alice", "key=acct-1", "status=done"} {
		if !strings.Contains(site.log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, site.log.String())
		}
	}
	// Again: the key is no longer parked.
	code, _, body = site.post(t, "api/replay", keyForm("acct-1"), nil)
	if code != http.StatusConflict || !strings.Contains(body, "not parked") {
		t.Fatalf("a second replay: %d %s", code, body)
	}
}

func TestDiscardThroughTheAPICountsTheEvents(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	s.park(t, "acct-2", 3)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	code, _, body := site.post(t, "api/discard", keyForm("acct-2"), nil)
	if code != http.StatusOK || !strings.Contains(body, `"events": 3`) || !strings.Contains(body, "discarded 3 events") {
		t.Fatalf("discard: %d %s", code, body)
	}
	var o overviewDoc
	site.get(t, "api/overview", &o)
	if st := o.Entities[0].Subscribers[0].Stats; st.Discarded != 3 || st.ParkedKeys != 0 {
		t.Fatalf("stats after the discard: %+v", st)
	}
	if len(s.handled("acct-2")) != 0 {
		t.Fatal("discarded events were handled")
	}
}

func TestMutationsAreRefused(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	s.park(t, "acct-3", 2)
	readOnly := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	refusing := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()},
		Authorize: func(r *http.Request, a console.Action) (string, error) {
			return "", fmt.Errorf("bob may not %s %s", a.Verb, a.Key)
		}})
	open := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	expectAnswers(t, []posting{
		{"read-only API", readOnly, "api/replay", keyForm("acct-3"), nil, http.StatusForbidden, "read-only"},
		{"read-only form", readOnly, "discard", keyForm("acct-3"), nil, http.StatusForbidden, "read-only"},
		{"unauthorized", refusing, "api/discard", keyForm("acct-3"), nil, http.StatusForbidden, "bob may not discard acct-3"},
		{"cross-site", open, "api/discard", keyForm("acct-3"), http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden, "cross-origin"},
		{"cross-origin", open, "replay", keyForm("acct-3"), http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden, "cross-origin"},
		{"no key", open, "api/discard", url.Values{"entity": {"Account"}, "subscriber": {"Account"}}, nil, http.StatusBadRequest, "needs entity, subscriber and key"},
		{"unknown entity", open, "api/discard", url.Values{"entity": {"Nope"}, "subscriber": {"Account"}, "key": {"k"}}, nil, http.StatusNotFound, "no entity"},
		{"unknown subscriber", open, "api/discard", url.Values{"entity": {"Account"}, "subscriber": {"Nope"}, "key": {"k"}}, nil, http.StatusNotFound, "no subscriber"},
	})
	if st := s.engine.Stats(); st.ParkedKeys != 1 || st.Parked != 2 {
		t.Fatalf("a refused mutation changed the park: %+v", st)
	}
	if !strings.Contains(refusing.log.String(), "mutation refused") || !strings.Contains(open.log.String(), "cross-origin mutation refused") {
		t.Fatalf("refusals are not logged:\n%s\n%s", refusing.log.String(), open.log.String())
	}
	// Mutations are POST only; reads are GET only.
	for _, path := range []string{"api/replay", "replay", "api/discard"} {
		if code := open.get(t, path, nil); code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", path, code)
		}
	}
	if code, _, _ := open.post(t, "api/overview", nil, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST api/overview: %d, want 405", code)
	}
}

func TestFormActionsRedirectToThePageThatShowsTheOutcome(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	s.park(t, "acct-4", 2)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	form := keyForm("acct-4")
	form.Set("back", "key")
	code, header, _ := site.post(t, "discard", form, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	loc := header.Get("Location")
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "key?") || !strings.Contains(loc, "action=1") {
		t.Fatalf("discard: %d to %q", code, loc)
	}
	_, body := site.page(t, loc)
	if !strings.Contains(body, "discarded 2 events of acct-4 in Account") || !strings.Contains(body, "by alice") {
		t.Fatalf("the key page shows no outcome:\n%s", body)
	}
	code, header, _ = site.post(t, "replay", keyForm("acct-4"), nil)
	if loc := header.Get("Location"); code != http.StatusSeeOther || loc != "./?action=2" {
		t.Fatalf("replay: %d to %q", code, loc)
	}
	_, body = site.page(t, "?action=2")
	if !strings.Contains(body, `class="notice bad"`) || !strings.Contains(body, "not parked") {
		t.Fatalf("the overview shows no failure:\n%s", body)
	}
}

func TestKeysReasonsAndPayloadsAreEscaped(t *testing.T) {
	const key = `<script>alert("key")</script>`
	s := newService(t, runtime.Config[string, deposit]{})
	s.setBroken(key, true)
	if err := s.engine.Submit(t.Context(), key, deposit{Seq: 1, Note: `<img src=x onerror=alert(1)>`}); err != nil {
		t.Fatal(err)
	}
	if err := s.engine.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	_, overview := site.page(t, "")
	_, keyPage := site.page(t, "key?"+keyForm(key).Encode())
	for name, body := range map[string]string{"overview": overview, "key page": keyPage} {
		if strings.Contains(body, "<script") || strings.Contains(body, "<img src=x") {
			t.Errorf("the %s has the key or the payload as markup:\n%s", name, body)
		}
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("the %s does not show the key as text", name)
		}
	}
	if !strings.Contains(keyPage, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the key page does not show the payload as text:\n%s", keyPage)
	}
	// The page's form gives the key back as it is.
	code, _, body := site.post(t, "api/discard", keyForm(key), nil)
	if code != http.StatusOK || !strings.Contains(body, "discarded 1 events") {
		t.Fatalf("discard of the key: %d %s", code, body)
	}
}

func TestReadsSayWhatIsWrong(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	ints := inspect.Engines[int64, deposit]{Name: "Webhook", Engines: func() []*runtime.Engine[int64, deposit] { return nil }}
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector(), ints}})
	for path, want := range map[string]int{
		"api/events?entity=Account&subscriber=Account":                  http.StatusBadRequest,
		"api/events?entity=Account&subscriber=Account&key=k&after=x":    http.StatusBadRequest,
		"api/events?entity=Account&subscriber=Account&key=k&limit=0":    http.StatusBadRequest,
		"api/events?entity=Account&subscriber=Account&key=k&limit=1001": http.StatusBadRequest,
		"api/parked?entity=Account&subscriber=Account&offset=-1":        http.StatusBadRequest,
		"api/events?entity=Nope&subscriber=Account&key=k":               http.StatusNotFound,
		"api/key?entity=Account&subscriber=Other&key=k":                 http.StatusNotFound,
		"api/key?entity=Account&subscriber=Account&key=k":               http.StatusOK,
		"api/events?entity=Account&subscriber=Account&key=":             http.StatusOK,
	} {
		var doc map[string]any
		if code := site.get(t, path, &doc); code != want {
			t.Errorf("%s: %d %v, want %d", path, code, doc, want)
		} else if code != http.StatusOK && doc["error"] == nil {
			t.Errorf("%s: no error in %v", path, doc)
		}
	}
	// A key of an integer entity must be an integer.
	intSite := newSite(t, console.Config{Inspectors: []inspect.Inspector{inspect.Engines[int64, deposit]{Name: "Webhook",
		Engines: func() []*runtime.Engine[int64, deposit] { return []*runtime.Engine[int64, deposit]{newIntEngine(t)} }}}})
	if code := intSite.get(t, "api/events?entity=Webhook&subscriber=Webhook&key=seven", nil); code != http.StatusBadRequest {
		t.Errorf("a key that is not an integer: %d, want 400", code)
	}
	if code, body := site.page(t, "key?entity=Account&subscriber=Nope&key=k"); code != http.StatusNotFound || !strings.Contains(body, "no subscriber") {
		t.Errorf("the key page of an unknown subscriber: %d", code)
	}
}

func newIntEngine(t *testing.T) *runtime.Engine[int64, deposit] {
	e, err := runtime.New(func(context.Context, int64, deposit) error { return nil }, runtime.Config[int64, deposit]{Name: "Webhook", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func TestMountedUnderAPrefix(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	// Mounted with StripPrefix at /ops exactly, a console asked for /ops
	// sends the browser to ops/, relative to /ops.
	c, err := console.New(console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := httptest.NewRecorder()
	http.StripPrefix("/ops", c).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ops", nil))
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "ops/" {
		t.Fatalf("GET /ops: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	code, body := site.page(t, "")
	if code != http.StatusOK || !strings.Contains(body, `href="style.css"`) || strings.Contains(body, `href="/`) {
		t.Fatalf("the overview's links are not relative: %d", code)
	}
	for _, asset := range []string{"style.css", "favicon.svg"} {
		if code, _ := site.page(t, asset); code != http.StatusOK {
			t.Errorf("%s: %d", asset, code)
		}
	}
	res, err := http.Get(site.srv.URL + "/ops/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("CSP %q", csp)
	}
}

func TestNewRefusesNothingToShow(t *testing.T) {
	if _, err := console.New(console.Config{}); err == nil {
		t.Fatal("a console of nothing")
	}
	if _, err := console.New(console.Config{Inspectors: []inspect.Inspector{nil}}); err == nil {
		t.Fatal("a console of a nil inspector")
	}
}
