package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// Hostile text, as a sender or a broker may put it into a park reason, an
// event's name or payload, a request's result.
const (
	setTitle    = "\x1b]0;pwned\x07" // OSC: sets the terminal window's title
	clearScreen = "\x1b[2J"          // CSI: clears the screen
	c1CSI       = "\u009b2J"         // the same in one C1 control
	bidi        = "\u202eevil"       // right-to-left override
	rawBytes    = "\xff\x9b"         // not UTF-8: an 8-bit CSI
	hostile     = "boom " + setTitle + clearScreen + c1CSI + bidi + rawBytes + "\r\nFAKE LINE"
)

// shownHostile is how the output shows hostile's runes that act.
var shownHostile = []string{`\u001b]0;pwned\u0007`, `\u001b[2J`, `\u009b2J`, `\u202eevil`, `\xff\x9b`}

// acting returns the first rune or byte of out that a terminal would act
// on, other than a tab or a newline (the command's layout), or "".
func acting(out string) string {
	for i, r := range out {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD"):
			return fmt.Sprintf("byte %#x (not UTF-8)", out[i])
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// hostileStore is a SQLite store whose every text the commands print holds
// hostile: a namespace, a park's reason, its event's name, error and
// payload, a request's result, and an outbox key parked with such a reason
// and such an event.
func hostileStore(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, err := json.Marshal(map[string]string{"note": "<b>&" + hostile})
	if err != nil {
		t.Fatal(err)
	}
	event := durable.RawEvent{Name: "Deposited" + clearScreen, Data: data}
	for _, ns := range []string{"Account", "Evil" + setTitle} {
		if err := s.Parks(ns).Append(ctx, "acct-1", hostile, []runtime.ParkedEvent[durable.RawEvent]{
			{Event: event, Err: hostile, Attempts: 3, At: time.Now()},
		}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Request(ctx, "Account", "acct-1", sqlstore.Replay)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelRequest(ctx, r.ID, hostile); err != nil {
		t.Fatal(err)
	}

	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendOutbox(ctx, tx, "Account", "bad", func(uint64) (durable.RawEvent, error) { return event, nil }); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	relay, err := outbox.New(outbox.Config[string, string]{Store: s, Entity: "Account", Codec: textCodec{}, Sink: refuseWith(hostile),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close(context.Background())
	if _, err := relay.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	return path
}

// refuseWith is a sink that refuses every event for good with its text.
type refuseWith string

func (r refuseWith) Send(context.Context, string, string) error {
	return runtime.Permanent(errors.New(string(r)))
}

// TestHostileTextIsShownNotExecuted: whatever the store holds reaches the
// terminal escaped, on stdout and stderr, in every command that prints it.
// (At 88ccaa5 list, show, requests, wait and outbox printed reasons,
// names, results and errors raw, and show let C1 controls and bidi
// overrides of payloads through.)
func TestHostileTextIsShownNotExecuted(t *testing.T) {
	path := hostileStore(t)
	for _, tc := range []struct {
		args    []string
		code    int
		hostile bool     // the output shows hostile (shownHostile)
		want    []string // besides
	}{
		{[]string{"list"}, exitOK, true, []string{`Evil\u001b]0;pwned\u0007`, `acct-1`}},
		{[]string{"list", "Account"}, exitOK, true, nil},
		{[]string{"list", "Evil"}, exitFail, false, []string{`namespaces: Account, Evil\u001b]0;pwned\u0007`}},
		{[]string{"show", "Account", "acct-1"}, exitOK, true, []string{`Deposited\u001b[2J`, `{"note":"<b>&boom `}},
		{[]string{"requests"}, exitOK, true, []string{"cancelled: boom"}},
		{[]string{"wait", "1"}, exitFail, true, []string{"request 1: cancelled: boom"}},
		{[]string{"outbox"}, exitOK, true, []string{"Account  bad  parked"}},
		// (JSON carries no bytes that are not UTF-8: the encoder wrote \ufffd.)
		{[]string{"outbox", "show", "Account", "bad"}, exitOK, false, []string{`Deposited\u001b[2J`, `{"note":"<b>&boom \u001b]0;pwned\u0007\u001b[2J\u009b2J\u202eevil`}},
	} {
		code, out, errOut := runBinary(t, path, tc.args...)
		all := out + errOut
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%q", tc.args, code, tc.code, all)
		}
		if a := acting(all); a != "" {
			t.Errorf("%q: %s reaches the terminal:\n%q", tc.args, a, all)
		}
		want := tc.want
		if tc.hostile {
			want = append(want, shownHostile...)
		}
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("%q: the output lacks %q:\n%q", tc.args, w, all)
			}
		}
		if strings.Contains(all, "\nFAKE LINE") {
			t.Errorf("%q: hostile text began a line of its own:\n%q", tc.args, all)
		}
	}
}

// TestShowPrintsPayloadsAsWritten: show and outbox show print a JSON
// payload without the \u003c escapes Go's encoder wrote into it (issue 43).
func TestShowPrintsPayloadsAsWritten(t *testing.T) {
	path := hostileStore(t)
	for _, args := range [][]string{{"show", "Account", "acct-1"}, {"outbox", "show", "Account", "bad"}} {
		code, out, errOut := runBinary(t, path, args...)
		if code != exitOK || !strings.Contains(out, `{"note":"<b>&boom `) || strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) {
			t.Errorf("%q: exit %d, want the payload as written:\n%q", args, code, out+errOut)
		}
	}
}
