package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// stuckLedger is a ledger whose handlers may run for an hour, so that a
// blocked key stays blocked until the test acts on it.
func stuckLedger(t *testing.T, attempts int, transports ...inspect.Transport) *Ledger {
	t.Helper()
	l, err := NewLedger(LedgerOptions{Authorize: alice, Refresh: -1, Timeout: time.Hour, Attempts: attempts, Sample: -1,
		Transports: transports, StuckAfter: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func keyPage(l *Ledger, account string) string {
	return l.URL + "key?" + url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {account}}.Encode()
}

// reloadUntil reloads the page at addr until the text of what sel selects
// (its white space collapsed) contains want, and returns that text; every
// load is the browser's own pace, bounded by the step's time.
func reloadUntil(t *testing.T, ctx context.Context, addr string, sel chromedp.CSS, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	for {
		if err := chromedp.Do(ctx, chromedp.Navigate(addr)); err != nil {
			t.Fatalf("waiting for %q in %s: %v", want, sel, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.innerText).join(" ").replace(/\s+/g, " ")`, string(sel))))
		if err != nil {
			t.Fatalf("waiting for %q in %s: %v", want, sel, err)
		}
		if strings.Contains(text, want) {
			return text
		}
	}
}

// A handler blocked on a key shows its running event on the key's page;
// Cancel attempt ends its context, the retry runs, and once the attempts
// are used up the key parks, as the policy says.
func TestCancelAttemptFollowsThePolicy(t *testing.T) {
	ctx := browser(t)
	l := stuckLedger(t, 2)
	release := make(chan struct{})
	defer close(release)
	l.Bank().Slow("acct-5", release)
	if err := l.Publish(t.Context(), "acct-5", 3); err != nil {
		t.Fatal(err)
	}
	<-l.Bank().Started()
	do(t, ctx, chromedp.Navigate(keyPage(l, "acct-5")))
	running := get(t, ctx, chromedp.Text(chromedp.CSS(`section.running`)))
	for _, want := range []string{"Running now", "AccountOpened", "version 1", "attempt 1", "running for", `"Owner": "Ada Lovelace"`} {
		if !strings.Contains(running, want) {
			t.Errorf("the running event %q lacks %q", running, want)
		}
	}
	if facts := strings.Join(strings.Fields(get(t, ctx, chromedp.Text(chromedp.CSS(`dl.facts`)))), " "); !strings.Contains(facts, "pending events 3") {
		t.Errorf("the key's facts %q do not count 3 pending events", facts)
	}
	if status := submit(t, ctx, `button.cancel`); status != http.StatusOK {
		t.Fatalf("cancel: the page after it answered %d", status)
	}
	if notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`))); !strings.Contains(notice, "cancelled the running attempt of acct-5") || !strings.Contains(notice, "by alice") {
		t.Fatalf("notice %q", notice)
	}
	// The retry runs: the page shows its second attempt.
	<-l.Bank().Started()
	reloadUntil(t, ctx, keyPage(l, "acct-5"), `section.running`, "attempt 2")
	submit(t, ctx, `button.cancel`)
	// Out of attempts, the key parks with its three events.
	reason := reloadUntil(t, ctx, keyPage(l, "acct-5"), `dd.reason`, "alice")
	events := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("ol.events li").length`))
	if events != 3 || !strings.Contains(reason, "cancelled by an operator") {
		t.Fatalf("parked with %d events, reason %q", events, reason)
	}
	if st := l.Accounts.Stats()["Account"]; st.ParkedKeys != 1 || st.Parked != 3 || st.Retried != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Park now parks a key whose handler never returns, with its backlog, and
// the other keys go on.
func TestParkNowParksAHungKeyAndOthersGoOn(t *testing.T) {
	ctx := browser(t)
	l := stuckLedger(t, 3)
	release := make(chan struct{})
	defer close(release)
	l.Bank().Hang("acct-6", release)
	if err := l.Publish(t.Context(), "acct-6", 4); err != nil {
		t.Fatal(err)
	}
	<-l.Bank().Started()
	do(t, ctx, chromedp.Navigate(keyPage(l, "acct-6")))
	submit(t, ctx, `a.park-now`) // the key's page asks first
	confirm := get(t, ctx, chromedp.Text(chromedp.CSS(`div.confirm`)))
	if !strings.Contains(confirm, "with its 4 pending events") || !strings.Contains(confirm, "withdrawn") {
		t.Fatalf("the confirmation says %q", confirm)
	}
	if status := submit(t, ctx, `div.confirm button.discard`); status != http.StatusOK {
		t.Fatalf("park now: the page after it answered %d", status)
	}
	if notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`))); !strings.Contains(notice, "parked acct-6 in Account now with 4 events") {
		t.Fatalf("notice %q", notice)
	}
	badge := get(t, ctx, chromedp.Text(chromedp.CSS(`h2.key .badge`)))
	firstError := get(t, ctx, chromedp.Text(chromedp.CSS(`ol.events li p.error`)))
	events := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("ol.events li").length`))
	if badge != "parked" || events != 4 || !strings.Contains(firstError, "withdrawn by an operator") {
		t.Fatalf("after park now: badge %q, %d events, first error %q", badge, events, firstError)
	}
	// Another account goes on while the handler still hangs.
	if err := l.Publish(t.Context(), "acct-8", 2); err != nil {
		t.Fatal(err)
	}
	reloadUntil(t, ctx, keyPage(l, "acct-8"), `dl.facts`, "pending events 0")
	if got := l.Applied("acct-8"); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("acct-8 applied %v", got)
	}
	if len(l.Applied("acct-6")) != 0 {
		t.Fatal("the hung account's events were applied")
	}
}

// consoleErrors collects what the browser reports as errors and warnings:
// a page that broke its Content-Security-Policy, or threw, shows there.
type consoleErrors struct {
	mu   sync.Mutex
	seen []string
}

func listenForErrors(t *testing.T, ctx context.Context) *consoleErrors {
	t.Helper()
	ce := &consoleErrors{}
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				msg = fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *cdpruntime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeWarning {
				msg = "console " + string(ev.Type)
			}
		}
		if msg != "" {
			ce.mu.Lock()
			ce.seen = append(ce.seen, msg)
			ce.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return ce
}

func (ce *consoleErrors) all() []string {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	return slices.Clone(ce.seen)
}

// chartPoints returns the points each chart of the page draws, by its
// series (its class).
func chartPoints(t *testing.T, ctx context.Context) map[string]int {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[map[string]int](`Object.fromEntries([...document.querySelectorAll("figure.chart")].map(f =>
		[f.classList[1], Number(f.querySelector("svg").dataset.points)]))`))
}

// The charts show points after a few samples, drawn on the server as SVG:
// the overview's small ones, a subscriber's large ones; every page stays
// within its Content-Security-Policy, with no error in the browser.
func TestChartsShowPointsWithinTheCSP(t *testing.T) {
	ctx := browser(t)
	errs := listenForErrors(t, ctx)
	l := stuckLedger(t, 3)
	release := make(chan struct{})
	defer close(release)
	l.Bank().Slow("acct-9", release)
	for i := range 3 {
		if err := l.Publish(t.Context(), fmt.Sprintf("acct-%d", 20+i), 5); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := l.Park(t.Context(), "acct-30", 2); err != nil {
				t.Fatal(err)
			}
			if err := l.Publish(t.Context(), "acct-9", 3); err != nil {
				t.Fatal(err)
			}
		}
		l.Console.Sample(t.Context())
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	small := chartPoints(t, ctx)
	for series, want := range map[string]int{"handled": 2, "failed": 2, "backlog": 3, "oldest": 3, "parked": 3} {
		if small[series] != want {
			t.Errorf("the overview's %s chart draws %d points, want %d (all: %v)", series, small[series], want, small)
		}
	}
	parked := get(t, ctx, chromedp.Text(chromedp.CSS(`figure.chart.parked .now`)))
	if parked != "2" {
		t.Errorf("the parked chart's latest value is %q, want 2", parked)
	}
	submit(t, ctx, `h3 a.name`) // the subscriber's page
	if large := chartPoints(t, ctx); large["backlog"] != 3 || get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(".charts.large").length`)) != 1 {
		t.Errorf("the subscriber's page draws %v", large)
	}
	rctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	res, err := chromedp.RunResponse(rctx, chromedp.Navigate(keyPage(l, "acct-9")))
	if err != nil {
		t.Fatal(err)
	}
	csp, _ := res.Headers["Content-Security-Policy"].(string)
	scripts := get(t, ctx, chromedp.Evaluate[int](`document.scripts.length`))
	if scripts != 0 || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("%d scripts, CSP %q", scripts, csp)
	}
	if running := get(t, ctx, chromedp.Text(chromedp.CSS(`section.running`))); !strings.Contains(running, "AccountOpened") {
		t.Fatalf("acct-9's page shows %q", running)
	}
	if seen := errs.all(); len(seen) != 0 {
		t.Fatalf("the browser reported: %q", seen)
	}
}

// The outbox's parked keys are retried and discarded from the overview:
// Retry lets a key flow again (the relay sends it), Discard asks first on
// the key's page, then drops its unsent events.
func TestOutboxButtonsWork(t *testing.T) {
	ctx := browser(t)
	ob, err := NewOutbox(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	l := stuckLedger(t, 3, ob.Relay)
	for _, account := range []string{"acct-41", "acct-42"} {
		ob.Break(account, true)
		if err := ob.Write(t.Context(), account, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.Write(t.Context(), "acct-43", 2); err != nil {
		t.Fatal(err)
	}
	if err := ob.Ship(t.Context()); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(l.URL))
	rows := get(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.partitions tbody tr")].map(r => r.textContent.replace(/\s+/g, " "))`))
	if len(rows) != 2 || !strings.Contains(rows[0], "acct-41") || !strings.Contains(rows[0], "parked") || !strings.Contains(rows[0], "rejected by a schema check") {
		t.Fatalf("the outbox's rows: %q", rows)
	}
	// Retry: the sink takes the key's events now.
	ob.Break("acct-41", false)
	if status := submit(t, ctx, `table.partitions tr:first-child button.replay`); status != http.StatusOK {
		t.Fatalf("retry: the page after it answered %d", status)
	}
	if notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`))); !strings.Contains(notice, "acct-41 of the outbox of Account flows again") || !strings.Contains(notice, "by alice") {
		t.Fatalf("notice %q", notice)
	}
	if err := ob.Ship(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sent := ob.Sent(); !slices.Contains(sent, "acct-41:3") {
		t.Fatalf("sent %v, want acct-41's events", sent)
	}
	// Discard: the key's page asks, then its unsent events are dropped.
	do(t, ctx, chromedp.Navigate(l.URL))
	submit(t, ctx, `table.partitions a.discard`)
	if confirm := get(t, ctx, chromedp.Text(chromedp.CSS(`div.confirm`))); !strings.Contains(confirm, "Discard the 3 unsent events of acct-42") {
		t.Fatalf("the confirmation says %q", confirm)
	}
	submit(t, ctx, `div.confirm button.discard`)
	if notice := get(t, ctx, chromedp.Text(chromedp.CSS(`p.notice`))); !strings.Contains(notice, "discarded 3 events of key acct-42") {
		t.Fatalf("notice %q", notice)
	}
	if stopped, err := ob.Stopped(t.Context()); err != nil || len(stopped) != 0 {
		t.Fatalf("stopped keys after retry and discard: %+v %v", stopped, err)
	}
	if rows := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.partitions tbody tr").length`)); rows != 0 {
		t.Fatalf("%d outbox keys still listed", rows)
	}
}
