package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/genimpl"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// The console tells a guard's skip from an unimplemented event's
// acknowledgement (both are runtime.Skipped outcomes): the API gives both
// parts of skipped, and the page shows them as two counters.
func TestGuardSkipsAndUnimplementedAreToldApart(t *testing.T) {
	e, err := runtime.New(func(_ context.Context, _ string, d deposit) error {
		switch d.Seq % 3 {
		case 1:
			return runtime.Skip("late transition: state Open ranks below Closed")
		case 2:
			return runtime.SkipApplied(genimpl.ReasonUnimplemented)
		}
		return nil
	}, runtime.Config[string, deposit]{Name: "Account", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	for seq := 1; seq <= 7; seq++ { // 1 4 7 skipped, 2 5 unimplemented, 3 6 handled
		if err := e.Submit(t.Context(), "acct-1", deposit{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{inspect.Engines[string, deposit]{Name: "Account",
		Engines: func() []*runtime.Engine[string, deposit] { return []*runtime.Engine[string, deposit]{e} }}}})
	var o struct {
		Entities []struct {
			Subscribers []struct {
				Stats struct {
					Handled       uint64 `json:"handled"`
					Skipped       uint64 `json:"skipped"`
					GuardSkipped  uint64 `json:"guard_skipped"`
					Unimplemented uint64 `json:"unimplemented"`
				} `json:"stats"`
			} `json:"subscribers"`
		} `json:"entities"`
	}
	if code := site.get(t, "api/overview", &o); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if len(o.Entities) != 1 || len(o.Entities[0].Subscribers) != 1 {
		t.Fatalf("overview: %+v", o)
	}
	if st := o.Entities[0].Subscribers[0].Stats; st.Handled != 2 || st.Skipped != 5 || st.GuardSkipped != 3 || st.Unimplemented != 2 {
		t.Fatalf("stats %+v: want 2 handled, 5 skipped: 3 by the guards, 2 unimplemented", st)
	}
	code, page := site.page(t, "")
	if code != http.StatusOK {
		t.Fatalf("page: status %d", code)
	}
	for _, tile := range []string{"<dt>skipped by guards</dt><dd>3</dd>", "<dt>unimplemented</dt><dd>2</dd>"} {
		if !strings.Contains(page, tile) {
			t.Errorf("the page has no %q", tile)
		}
	}
}
