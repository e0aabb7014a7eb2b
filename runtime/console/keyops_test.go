package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// stuckService is an engine whose handler blocks on the key "stuck":
// until its context ends or the test does, or, deaf, until the test ends. It records the
// causes of the contexts it saw end, and what it handled.
type stuckService struct {
	engine  *runtime.Engine[string, deposit]
	started chan int
	done    chan string // each other key's events, once handled
	release chan struct{}
	mu      sync.Mutex
	causes  []error
	handled map[string][]int
}

func newStuckService(t *testing.T, deaf bool, attempts int) *stuckService {
	t.Helper()
	s := &stuckService{started: make(chan int, 16), done: make(chan string, 16), release: make(chan struct{}), handled: map[string][]int{}}
	e, err := runtime.New(func(ctx context.Context, key string, d deposit) error {
		if key == "stuck" {
			s.started <- d.Seq
			if deaf {
				<-s.release
			} else {
				select {
				case <-s.release: // the test ends
				case <-ctx.Done():
					s.mu.Lock()
					s.causes = append(s.causes, context.Cause(ctx))
					s.mu.Unlock()
					return ctx.Err()
				}
			}
		}
		s.mu.Lock()
		s.handled[key] = append(s.handled[key], d.Seq)
		s.mu.Unlock()
		if key != "stuck" {
			s.done <- key
		}
		return nil
	}, runtime.Config[string, deposit]{Name: "Account", Logger: quiet(), Timeout: time.Hour,
		Retry: runtime.Retry{Attempts: attempts, Initial: time.Microsecond, Max: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	s.engine = e
	t.Cleanup(func() {
		close(s.release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(ctx)
	})
	for i := 1; i <= 3; i++ {
		if err := e.Submit(t.Context(), "stuck", deposit{Seq: i, Amount: int64(100 * i)}); err != nil {
			t.Fatal(err)
		}
	}
	<-s.started
	return s
}

func (s *stuckService) inspector() inspect.Inspector {
	return inspect.Engines[string, deposit]{Name: "Account", Engines: func() []*runtime.Engine[string, deposit] {
		return []*runtime.Engine[string, deposit]{s.engine}
	}}
}

func (s *stuckService) seenCauses() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.causes...)
}

type keyDoc struct {
	Parked   bool   `json:"parked"`
	Reason   string `json:"reason"`
	Live     bool   `json:"live"`
	Pending  int    `json:"pending"`
	Stuck    bool   `json:"stuck"`
	Operable bool   `json:"operable"`
	Running  *struct {
		Known   bool           `json:"known"`
		Name    string         `json:"name"`
		Data    map[string]any `json:"data"`
		Attempt int            `json:"attempt"`
		Started time.Time      `json:"started"`
		For     float64        `json:"running_seconds"`
		Ended   string         `json:"context_ended"`
	} `json:"running"`
}

const stuckKey = "api/key?entity=Account&subscriber=Account&key=stuck"

func TestAStuckKeysPageShowsItsRunningEvent(t *testing.T) {
	s := newStuckService(t, false, 1)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll, StuckAfter: time.Nanosecond})
	var k keyDoc
	if code := site.get(t, stuckKey, &k); code != http.StatusOK || !k.Live || k.Pending != 3 || !k.Stuck || !k.Operable || k.Running == nil {
		t.Fatalf("api/key: %d %+v", code, k)
	}
	if r := k.Running; !r.Known || r.Name != "console_test.deposit" || r.Data["seq"] != 1.0 || r.Attempt != 1 || r.Started.IsZero() || r.For < 0 || r.Ended != "" {
		t.Fatalf("running: %+v", r)
	}
	_, body := site.page(t, "key?entity=Account&subscriber=Account&key=stuck")
	for _, want := range []string{"Running now", "<strong>console_test.deposit</strong>", "attempt 1", `&#34;amount&#34;: 100`,
		`action="cancel-attempt"`, "confirm=park-now", `<span class="badge warn">stuck</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the stuck key's page lacks %q", want)
		}
	}
	_, body = site.page(t, "key?entity=Account&subscriber=Account&key=stuck&confirm=park-now")
	if !strings.Contains(body, `action="park-now"`) || !strings.Contains(body, "with its 3 pending events") || strings.Contains(body, `http-equiv="refresh"`) {
		t.Fatalf("the park-now confirmation:\n%s", body)
	}
	// A key that neither runs nor waits has no such buttons.
	_, body = site.page(t, "key?entity=Account&subscriber=Account&key=idle")
	if strings.Contains(body, "cancel-attempt") || strings.Contains(body, "park-now") {
		t.Fatal("an idle key's page offers to cancel or park it")
	}
}

func TestCancelAttemptThroughTheAPIFollowsThePolicy(t *testing.T) {
	s := newStuckService(t, false, 2)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	code, _, body := site.post(t, "api/cancel-attempt", keyForm("stuck"), nil)
	if code != http.StatusOK || !strings.Contains(body, "cancelled the running attempt of stuck in Account") {
		t.Fatalf("cancel: %d %s", code, body)
	}
	<-s.started // the retry
	if causes := s.seenCauses(); len(causes) != 1 || !errors.Is(causes[0], runtime.ErrOperatorCancel) || !strings.Contains(causes[0].Error(), "alice") {
		t.Fatalf("the handler saw %v", causes)
	}
	var k keyDoc
	if site.get(t, stuckKey, &k); k.Running == nil || k.Running.Attempt != 2 {
		t.Fatalf("the retry: %+v", k.Running)
	}
	if code, _, body := site.post(t, "api/cancel-attempt", keyForm("stuck"), nil); code != http.StatusOK {
		t.Fatalf("second cancel: %d %s", code, body)
	}
	if err := s.engine.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k = (keyDoc{}); site.get(t, stuckKey, &k) != http.StatusOK || !k.Parked || !strings.Contains(k.Reason, "alice, from the console") || k.Running != nil {
		t.Fatalf("after its attempts: %+v", k)
	}
	if code, _, body := site.post(t, "api/cancel-attempt", keyForm("stuck"), nil); code != http.StatusConflict || !strings.Contains(body, "no attempt") {
		t.Fatalf("cancel of a parked key: %d %s", code, body)
	}
	for _, want := range []string{"ordergen console: cancel-attempt", "who=alice", "key=stuck", "status=done"} {
		if !strings.Contains(site.log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

func TestParkNowThroughTheAPIWithdrawsADeafHandler(t *testing.T) {
	s := newStuckService(t, true, 5)
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	code, _, body := site.post(t, "api/park-now", keyForm("stuck"), nil)
	if code != http.StatusOK || !strings.Contains(body, "parked stuck in Account now with 3 events") || !strings.Contains(body, `"events": 3`) {
		t.Fatalf("park now: %d %s", code, body)
	}
	var k keyDoc
	if site.get(t, stuckKey, &k); !k.Parked || k.Pending != 0 || k.Running != nil || !strings.Contains(k.Reason, "parked now by alice") {
		t.Fatalf("after park now: %+v", k)
	}
	var evs eventsDoc
	site.get(t, "api/events?entity=Account&subscriber=Account&key=stuck", &evs)
	if len(evs.Events) != 3 || evs.Events[0].Data["seq"] != 1.0 || !strings.Contains(evs.Events[0].Error, "withdrawn by an operator") {
		t.Fatalf("parked events: %+v", evs)
	}
	// Other keys go on while the handler still hangs.
	if err := s.engine.Submit(t.Context(), "other", deposit{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if key := <-s.done; key != "other" {
		t.Fatalf("handled %s", key)
	}
	if code, _, body := site.post(t, "api/park-now", keyForm("stuck"), nil); code != http.StatusConflict || !strings.Contains(body, "no pending event") {
		t.Fatalf("park now of a parked key: %d %s", code, body)
	}
	// From the page: the form asks, then goes back to the key's page.
	form := keyForm("other")
	form.Set("back", "key")
	if err := s.engine.Submit(t.Context(), "stuck", deposit{Seq: 4}); err != nil { // joins the park
		t.Fatal(err)
	}
	code, header, _ := site.post(t, "park-now", form, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if loc := header.Get("Location"); code != http.StatusSeeOther || !strings.HasPrefix(loc, "key?") {
		t.Fatalf("park now from the page: %d to %q", code, loc)
	}
}

// onlyInspector hides an Inspector's KeyOperator methods.
type onlyInspector struct{ inspect.Inspector }

func TestKeyActionsAreRefused(t *testing.T) {
	s := newStuckService(t, false, 1)
	readOnly := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}})
	refusing := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()},
		Authorize: func(_ *http.Request, a console.Action) (string, error) {
			return "", fmt.Errorf("bob may not %s %s", a.Verb, a.Key)
		}})
	open := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll})
	blind := newSite(t, console.Config{Inspectors: []inspect.Inspector{onlyInspector{s.inspector()}}, Authorize: allowAll})
	expectAnswers(t, []posting{
		{"read-only API", readOnly, "api/park-now", keyForm("stuck"), nil, http.StatusForbidden, "read-only"},
		{"read-only form", readOnly, "cancel-attempt", keyForm("stuck"), nil, http.StatusForbidden, "read-only"},
		{"unauthorized", refusing, "api/park-now", keyForm("stuck"), nil, http.StatusForbidden, "bob may not park-now stuck"},
		{"unauthorized cancel", refusing, "api/cancel-attempt", keyForm("stuck"), nil, http.StatusForbidden, "bob may not cancel-attempt stuck"},
		{"cross-site", open, "api/park-now", keyForm("stuck"), http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden, "cross-origin"},
		{"cross-origin", open, "cancel-attempt", keyForm("stuck"), http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden, "cross-origin"},
		{"no key", open, "api/park-now", url.Values{"entity": {"Account"}, "subscriber": {"Account"}}, nil, http.StatusBadRequest, "needs entity, subscriber and key"},
		{"unknown subscriber", open, "api/cancel-attempt", url.Values{"entity": {"Account"}, "subscriber": {"Nope"}, "key": {"stuck"}}, nil, http.StatusNotFound, "no subscriber"},
		{"not running", open, "api/cancel-attempt", keyForm("idle"), nil, http.StatusConflict, "no attempt"},
		{"nothing pending", open, "api/park-now", keyForm("idle"), nil, http.StatusConflict, "no pending event"},
		{"an inspector that cannot", blind, "api/park-now", keyForm("stuck"), nil, http.StatusBadRequest, "cannot park-now"},
	})
	if ks := s.engine.KeyStatus("stuck"); ks.Parked || !ks.Running || ks.Attempt != 1 || len(s.seenCauses()) != 0 {
		t.Fatalf("a refused action acted: %+v, causes %v", ks, s.seenCauses())
	}
	for _, path := range []string{"api/park-now", "park-now", "api/cancel-attempt"} {
		if code := open.get(t, path, nil); code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", path, code)
		}
	}
	_, body := readOnly.page(t, "key?entity=Account&subscriber=Account&key=stuck")
	if strings.Contains(body, "cancel-attempt") || strings.Contains(body, "confirm=park-now") || !strings.Contains(body, "Running now") {
		t.Fatal("a read-only console offers to act on a running key, or hides what runs")
	}
}
