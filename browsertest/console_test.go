package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ordergen/ordergen/runtime/console"
)

// browser starts a headless Chromium for the test, or skips it when there
// is none.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := Chromium()
	if path == "" {
		t.Skip("no Chromium found (set ORDERGEN_CHROMIUM, or apt-get install chromium): the console's browser tests need one")
	}
	ctx, stop := NewBrowser(path, t.TempDir(), 1280, 900)
	t.Cleanup(stop)
	// The first run starts the browser, which lives as long as its context:
	// that one has no deadline; each step below has its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// stepTimeout bounds each step of a test in the browser.
const stepTimeout = 30 * time.Second

// do runs steps in the browser.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// get runs a step that reads a value in the browser.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// submit clicks what sel selects and waits for the page it leads to,
// whose status it returns.
func submit(t *testing.T, ctx context.Context, sel chromedp.CSS) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(sel))
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// alice may do anything.
func alice(*http.Request, console.Action) (string, error) { return "alice", nil }

func ledgerFor(t *testing.T, authorize console.Authorizer) *Ledger {
	t.Helper()
	l, err := NewLedger(LedgerOptions{Authorize: authorize, Refresh: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func parkedKeys(t *testing.T, l *Ledger) []string {
	t.Helper()
	keys, err := l.Accounts.ParkedKeys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys["Account"] {
		out = append(out, k.Key)
	}
	return out
}

func TestParkedKeyAppearsWithItsReason(t *testing.T) {
	ctx := browser(t)
	l := ledgerFor(t, alice)
	if err := l.Park(t.Context(), "acct-7", 3); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	row := get(t, ctx, chromedp.Text(chromedp.CSS(`table.parked tbody tr`)))
	for _, want := range []string{"acct-7", "core banking: account acct-7 is locked for an audit", "3"} {
		if !strings.Contains(row, want) {
			t.Errorf("the parked key's row %q lacks %q", row, want)
		}
	}
	if tile := get(t, ctx, chromedp.Text(chromedp.CSS(`dl.tiles div.bad dd`))); tile != "3" {
		t.Errorf("parked events tile %q, want 3", tile)
	}
	// Its page lists its events, in order, with the error on the first.
	if status := submit(t, ctx, `table.parked a[href^="key?"]`); status != http.StatusOK {
		t.Fatalf("the key's page: %d", status)
	}
	events := get(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("ol.events li header strong")].map(e => e.textContent)`))
	firstError := get(t, ctx, chromedp.Text(chromedp.CSS(`ol.events li p.error`)))
	if !slices.Equal(events, []string{"AccountOpened", "Deposited", "Deposited"}) || !strings.Contains(firstError, "locked for an audit") {
		t.Fatalf("the key's page shows %v, first error %q", events, firstError)
	}
}

func TestReplayThroughThePageUnparksTheKeyInOrder(t *testing.T) {
	ctx := browser(t)
	l := ledgerFor(t, alice)
	if err := l.Park(t.Context(), "acct-7", 4); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(l.URL), chromedp.WaitVisible(chromedp.CSS(`table.parked`)))
	l.Fix("acct-7")
	if status := submit(t, ctx, `table.parked button.replay`); status != http.StatusOK {
		t.Fatalf("replay: the page after it answered %d", status)
	}
	notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`)))
	rows := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.parked tbody tr").length`))
	if !strings.Contains(notice, "replayed acct-7 in Account") || !strings.Contains(notice, "by alice") {
		t.Fatalf("notice %q", notice)
	}
	if rows != 0 {
		t.Fatalf("%d parked keys still listed after the replay", rows)
	}
	if got := l.Applied("acct-7"); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("applied versions %v, want 1 2 3 4 in order", got)
	}
	if keys := parkedKeys(t, l); len(keys) != 0 {
		t.Fatalf("still parked: %v", keys)
	}
	if !strings.Contains(l.Log.String(), "who=alice") {
		t.Fatalf("the replay is not logged with who:\n%s", l.Log.String())
	}
}

func TestDiscardThroughThePageCountsTheEvents(t *testing.T) {
	ctx := browser(t)
	l := ledgerFor(t, alice)
	if err := l.Park(t.Context(), "acct-9", 3); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	submit(t, ctx, `table.parked a.discard`) // to the key's page, which asks first
	if status := submit(t, ctx, `div.confirm button.discard`); status != http.StatusOK {
		t.Fatalf("discard: the page after it answered %d", status)
	}
	notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`)))
	if !strings.Contains(notice, "discarded 3 events of acct-9 in Account") {
		t.Fatalf("notice %q", notice)
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	discarded := get(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("dl.tiles div")].find(d => d.querySelector("dt").textContent == "discarded").querySelector("dd").textContent`))
	if discarded != "3" {
		t.Fatalf("the discarded tile shows %q, want 3", discarded)
	}
	if st := l.Accounts.Stats()["Account"]; st.Discarded != 3 || st.ParkedKeys != 0 {
		t.Fatalf("stats %+v", st)
	}
	if len(l.Applied("acct-9")) != 0 {
		t.Fatal("discarded events were applied")
	}
}

func TestKeyWithHTMLIsShownEscaped(t *testing.T) {
	const key = `<img src=x onerror="document.title='pwned'"><b>bold</b>`
	ctx := browser(t)
	l := ledgerFor(t, alice)
	if err := l.Park(t.Context(), key, 2); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"overview", "key"} {
		if page == "overview" {
			do(t, ctx, chromedp.Navigate(l.URL))
		} else {
			submit(t, ctx, `table.parked a[href^="key?"]`)
		}
		shown := get(t, ctx, chromedp.Text(chromedp.CSS(`main code`)))
		markup := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("main b, main img").length`))
		title := get(t, ctx, chromedp.Title())
		if shown != key || markup != 0 || title == "pwned" {
			t.Fatalf("%s: the key shows as %q, %d elements of it are markup, title %q", page, shown, markup, title)
		}
	}
	// The key page's own form carries the key back exactly.
	l.Fix(key)
	submit(t, ctx, `div.actions button.replay`)
	if notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`))); !strings.Contains(notice, "replayed "+key) {
		t.Fatalf("notice %q", notice)
	}
}

func TestCrossOriginPostIsRefused(t *testing.T) {
	ctx := browser(t)
	l := ledgerFor(t, alice)
	if err := l.Park(t.Context(), "acct-7", 2); err != nil {
		t.Fatal(err)
	}
	// Another origin (another port) with a form that posts to the console,
	// as a page of another site would in the operator's browser.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%sdiscard">
<input type="hidden" name="entity" value="Account"><input type="hidden" name="subscriber" value="Account">
<input type="hidden" name="key" value="acct-7"><button id="go">win a prize</button></form>`, l.URL)
	}))
	defer evil.Close()
	do(t, ctx, chromedp.Navigate(evil.URL))
	if status := submit(t, ctx, `#go`); status != http.StatusForbidden {
		t.Fatalf("the console answered the cross-origin post with %d", status)
	}
	if page := get(t, ctx, chromedp.Text(chromedp.ID(`error`))); !strings.Contains(page, "cross-origin") {
		t.Fatalf("the console answered %q", page)
	}
	if keys := parkedKeys(t, l); !slices.Equal(keys, []string{"acct-7"}) {
		t.Fatalf("parked after the cross-origin post: %v", keys)
	}
	if st := l.Accounts.Stats()["Account"]; st.Discarded != 0 {
		t.Fatalf("discarded %d", st.Discarded)
	}
	if !strings.Contains(l.Log.String(), "cross-origin mutation refused") {
		t.Fatalf("the refusal is not logged:\n%s", l.Log.String())
	}
}

func TestWithoutAnAuthorizerNoButtonsAndTheAPIRefuses(t *testing.T) {
	ctx := browser(t)
	l := ledgerFor(t, nil)
	if err := l.Park(t.Context(), "acct-7", 2); err != nil {
		t.Fatal(err)
	}
	const controls = `document.querySelectorAll("form, button, a.discard").length`
	do(t, ctx, chromedp.Navigate(l.URL), chromedp.WaitVisible(chromedp.CSS(`table.parked`)))
	onOverview := get(t, ctx, chromedp.Evaluate[int](controls))
	badge := get(t, ctx, chromedp.Text(chromedp.CSS(`header .badge`)))
	submit(t, ctx, `table.parked a[href^="key?"]`)
	onKeyPage := get(t, ctx, chromedp.Evaluate[int](controls))
	if onOverview != 0 || onKeyPage != 0 || badge != "read-only" {
		t.Fatalf("a read-only console shows %d and %d controls, badge %q", onOverview, onKeyPage, badge)
	}
	// A script of the console's own origin calls the API: refused.
	type answer struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	do(t, ctx, chromedp.Navigate(l.Origin+"/probe"))
	got := get(t, ctx, chromedp.Evaluate[answer](`fetch("/ops/api/replay", {method: "POST", body: new URLSearchParams({entity: "Account", subscriber: "Account", key: "acct-7"})})
		.then(async r => ({status: r.status, body: await r.text()}))`, chromedp.EvalAwaitPromise))
	if got.Status != http.StatusForbidden || !strings.Contains(got.Body, "read-only") {
		t.Fatalf("the API answered %d %s", got.Status, got.Body)
	}
	if keys := parkedKeys(t, l); !slices.Equal(keys, []string{"acct-7"}) {
		t.Fatalf("parked: %v", keys)
	}
}
