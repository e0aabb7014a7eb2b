package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// refusing is a sink that refuses the events of the key "bad" for good.
type refusing struct{ sent []string }

func (r *refusing) Send(_ context.Context, key, e string) error {
	if key == "bad" {
		return runtime.Permanent(errors.New("record too large"))
	}
	r.sent = append(r.sent, key+":"+e)
	return nil
}

// outboxFixture is a store whose Account outbox has a parked key, bad,
// with two events, and a key that flows, good.
func outboxFixture(t *testing.T) (path string, s *sqlstore.Store, relay *outbox.Relay[string, string], sink *refusing) {
	t.Helper()
	ctx := t.Context()
	path = filepath.Join(t.TempDir(), "store.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, e := range []struct{ key, text string }{{"good", "one"}, {"bad", "two"}, {"bad", "three"}} {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendOutbox(ctx, tx, "Account", e.key, func(uint64) (durable.RawEvent, error) {
			name, data, err := textCodec{}.Encode(e.text)
			return durable.RawEvent{Name: name, Data: data}, err
		}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	sink = &refusing{}
	relay, err = outbox.New(outbox.Config[string, string]{Store: s, Entity: "Account", Codec: textCodec{}, Sink: sink,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close(context.Background()) })
	if _, err := relay.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	return path, s, relay, sink
}

func TestOutboxCommands(t *testing.T) {
	path, s, relay, sink := outboxFixture(t)
	code, out, errOut := runBinary(t, path, "outbox")
	if code != exitOK || !strings.Contains(out, "Account  2       ") || !strings.Contains(out, "Account  bad  parked  2       1") || !strings.Contains(out, "record too large") {
		t.Fatalf("outbox list: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, path, "outbox", "show", "Account", "bad")
	if code != exitOK || !strings.Contains(out, "version 1  Text") || !strings.Contains(out, `{"text":"three"}`) {
		t.Fatalf("outbox show: %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"outbox", "list", "Acount"}, "did you mean Account?"},
		{[]string{"outbox", "retry", "Account", "good"}, "neither parked nor retrying"},
		{[]string{"outbox", "retry", "Account", "bda"}, "did you mean bad?"},
		{[]string{"outbox", "discard", "Account", "good"}, "neither parked nor retrying"},
		{[]string{"outbox", "seed", "Account", "good", "9"}, "already set"},
		{[]string{"outbox", "show", "Account", "nobody"}, "no outbox event"},
	} {
		if code, _, errOut := runBinary(t, path, tc.args...); code != exitFail || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, want %d with %q\n%s", tc.args, code, exitFail, tc.want, errOut)
		}
	}
	for _, args := range [][]string{{"outbox", "rewind"}, {"outbox", "seed", "Account", "k", "zero"}, {"outbox", "retry", "Account"}} {
		if code, _, errOut := runBinary(t, path, args...); code != exitUsage || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, want %d with the usage\n%s", args, code, exitUsage, errOut)
		}
	}

	// The console of serve shows the parked key.
	st := outboxView{store: s}.TransportStatus()
	if len(st.Partitions) != 1 || st.Partitions[0].Name != "Account bad" || st.Partitions[0].Paused != "parked" {
		t.Fatalf("the console's outbox view: %+v", st)
	}

	// Retried, the key is tried again: the sink still refuses, it parks
	// again; discarded, its events are gone and a new one flows.
	if code, out, errOut := runBinary(t, path, "outbox", "retry", "Account", "bad"); code != exitOK || !strings.Contains(out, "flows again") {
		t.Fatalf("outbox retry: %d %s%s", code, out, errOut)
	}
	if _, err := relay.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runBinary(t, path, "outbox", "discard", "Account", "bad")
	if code != exitOK || !strings.Contains(out, "discarded 2 events of key bad of Account (versions 1 to 2)") {
		t.Fatalf("outbox discard: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBinary(t, path, "outbox", "seed", "Account", "new", "41"); code != exitOK || !strings.Contains(out, "version 42") {
		t.Fatalf("outbox seed: %d %s%s", code, out, errOut)
	}
	if v, err := s.OutboxVersion(t.Context(), "Account", "new"); err != nil || v != 41 {
		t.Fatalf("seeded version %d, %v", v, err)
	}
	if code, out, _ := runBinary(t, path, "outbox", "list"); code != exitOK || strings.Contains(out, "parked") {
		t.Fatalf("outbox list after the discard: %d\n%s", code, out)
	}
	if strings.Join(sink.sent, " ") != "good:one" {
		t.Fatalf("sent %v", sink.sent)
	}
}

// The console of serve -actions retries and discards the outbox's parked
// keys in the store, at once; read-only, it refuses.
func TestServeActsOnTheOutbox(t *testing.T) {
	_, s, relay, sink := outboxFixture(t)
	if st := (outboxView{store: s}).TransportStatus(); len(st.Partitions) != 1 || st.Partitions[0].Entity != "Account" || st.Partitions[0].Key != "bad" {
		t.Fatalf("the outbox's partitions do not name their key: %+v", st.Partitions)
	}
	form := url.Values{"transport": {"0"}, "entity": {"Account"}, "key": {"bad"}}
	if code, body := postForm(t, consoleSite(t, s, false), "api/outbox/discard", form); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Fatalf("discard on a read-only console: %d %s", code, body)
	}
	srv := consoleSite(t, s, true)
	if code, body := postForm(t, srv, "api/outbox/retry", form); code != http.StatusOK || !strings.Contains(body, "key bad of Account flows again") {
		t.Fatalf("retry: %d %s", code, body)
	}
	if code, body := postForm(t, srv, "api/outbox/retry", form); code != http.StatusConflict || !strings.Contains(body, "neither parked nor retrying") {
		t.Fatalf("a second retry: %d %s", code, body)
	}
	if _, err := relay.RunOnce(t.Context()); err != nil { // the sink refuses it again: it parks again
		t.Fatal(err)
	}
	if code, body := postForm(t, srv, "api/outbox/discard", form); code != http.StatusOK || !strings.Contains(body, "discarded 2 events of key bad of Account (versions 1 to 2)") {
		t.Fatalf("discard: %d %s", code, body)
	}
	if keys, err := s.OutboxKeys(t.Context(), "Account", 0); err != nil || len(keys) != 0 {
		t.Fatalf("stopped keys after the discard: %+v %v", keys, err)
	}
	if strings.Join(sink.sent, " ") != "good:one" {
		t.Fatalf("sent %v", sink.sent)
	}
}
