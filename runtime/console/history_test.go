package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

type historyDoc struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	Samples         []struct {
		At               time.Time `json:"at"`
		Handled          uint64    `json:"handled"`
		Failed           uint64    `json:"failed"`
		Pending          *int64    `json:"pending"`
		OldestAgeSeconds *float64  `json:"oldest_age_seconds"`
		Parked           int64     `json:"parked"`
	} `json:"samples"`
}

// chartPoints returns the number of points of each chart on a page, by
// its class.
func chartPoints(t *testing.T, body string) map[string]int {
	t.Helper()
	out := map[string]int{}
	re := regexp.MustCompile(`<figure class="chart (\w+)">[\s\S]*?data-points="(\d+)"`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		n := 0
		for _, d := range m[2] {
			n = n*10 + int(d-'0')
		}
		out[m[1]] += n
	}
	return out
}

// Samples a service takes itself: each is in api/history, the overview
// draws small charts of them, and the subscriber's page large ones.
func TestSamplesAreChartedAndServed(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{Retry: runtime.Retry{Attempts: 3, Initial: time.Microsecond, Max: time.Microsecond}})
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Sample: -1})
	_, body := site.page(t, "")
	if strings.Contains(body, `class="charts`) {
		t.Fatal("charts before any sample")
	}
	for i := 1; i <= 3; i++ {
		if err := s.engine.Submit(t.Context(), "acct-1", deposit{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.engine.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	site.c.Sample(t.Context())
	s.park(t, "acct-2", 2)
	site.c.Sample(t.Context())
	site.c.Sample(t.Context())

	var h historyDoc
	if code := site.get(t, "api/history?entity=Account&subscriber=Account", &h); code != http.StatusOK || len(h.Samples) != 3 {
		t.Fatalf("api/history: %d, %d samples", code, len(h.Samples))
	}
	first, last := h.Samples[0], h.Samples[2]
	if first.Handled != 3 || first.Parked != 0 || first.Pending == nil || *first.Pending != 0 || first.OldestAgeSeconds == nil {
		t.Fatalf("the first sample: %+v", first)
	}
	if last.Handled != 3 || last.Parked != 2 || last.Failed != 0 || h.IntervalSeconds != 5 || last.At.Before(first.At) {
		t.Fatalf("the last sample: %+v (interval %v)", last, h.IntervalSeconds)
	}
	_, body = site.page(t, "")
	points := chartPoints(t, body)
	// Rates need two samples: one point fewer.
	for class, want := range map[string]int{"handled": 2, "failed": 2, "backlog": 3, "oldest": 3, "parked": 3} {
		if points[class] != want {
			t.Errorf("the overview's %s chart has %d points, want %d", class, points[class], want)
		}
	}
	if !strings.Contains(body, `href="subscriber?entity=Account&amp;subscriber=Account"`) {
		t.Fatal("the overview does not link the subscriber's page")
	}
	code, page := site.page(t, "subscriber?entity=Account&subscriber=Account")
	if code != http.StatusOK || !strings.Contains(page, `class="charts large"`) || chartPoints(t, page)["parked"] != 3 {
		t.Fatalf("the subscriber's page: %d\n%s", code, page)
	}
	for path, want := range map[string]int{
		"api/history?entity=Account":                  http.StatusBadRequest,
		"api/history?entity=Nope&subscriber=Account":  http.StatusNotFound,
		"subscriber?entity=Account&subscriber=Nope":   http.StatusNotFound,
		"subscriber?entity=Account":                   http.StatusBadRequest,
		"api/history?entity=Account&subscriber=Other": http.StatusOK, // no samples: an empty list
	} {
		if code, _ := site.page(t, path); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}

// The console's own sampler takes a sample every Config.Sample until
// Close.
func TestTheSamplerRunsUntilClose(t *testing.T) {
	s := newService(t, runtime.Config[string, deposit]{})
	rounds := make(chan struct{}, 100)
	site := newSampledSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Sample: time.Millisecond},
		func() {
			select {
			case rounds <- struct{}{}:
			default:
			}
		})
	for range 3 {
		<-rounds
	}
	site.c.Close()
	site.c.Close() // harmless
	var h historyDoc
	site.get(t, "api/history?entity=Account&subscriber=Account", &h)
	n := len(h.Samples)
	if n < 3 || h.IntervalSeconds != time.Millisecond.Seconds() {
		t.Fatalf("%d samples every %vs after three rounds", n, h.IntervalSeconds)
	}
	// No round runs after Close returned.
	site.get(t, "api/history?entity=Account&subscriber=Account", &h)
	if len(h.Samples) != n {
		t.Fatalf("%d samples after Close, %d when it returned", len(h.Samples), n)
	}
}
