package outbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
)

// stallingSink takes events into log, except that the send of a key's
// event of version at, and only that one, says so on stalled and waits for
// release before it takes the event: a send in progress, for as long as
// the test needs.
type stallingSink struct {
	relay   int
	log     *deliveries
	at      uint64
	stalled chan string // the key, once per key
	release chan struct{}
}

func (s *stallingSink) Send(ctx context.Context, key string, e event) error {
	if e.Version == s.at {
		s.stalled <- key
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.log.add(delivery{key: key, version: e.Version, round: outbox.RoundOf(ctx), relay: s.relay})
	return nil
}

// withApplicationName returns the PostgreSQL URL dsn with an
// application_name, which names its sessions in pg_stat_activity; it
// skips the test when dsn is not a URL.
func withApplicationName(t *testing.T, dsn, name string) string {
	t.Helper()
	named, err := namedDSN(dsn, name)
	if err != nil {
		t.Skip(err)
	}
	return named
}

func namedDSN(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("the test names its sessions through a postgres:// URL; %s is not one (%v)", postgresEnv, err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// terminate ends every session named name, as an operator's
// pg_terminate_backend would (or a restart), from a connection of s, and
// waits until they are gone; it returns how many it ended. The sessions
// are listed first and ended one by one: in one statement the server may
// call pg_terminate_backend before it filters by name, on every session.
func terminate(ctx context.Context, s *sqlstore.Store, name string) (int, error) {
	rows, err := s.DB().QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, name)
	if err != nil {
		return 0, err
	}
	var pids []int64
	for rows.Next() {
		var pid int64
		if err := rows.Scan(&pid); err != nil {
			rows.Close()
			return 0, err
		}
		pids = append(pids, pid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range pids {
		var ended bool
		if err := s.DB().QueryRowContext(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&ended); err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}

// TestLostSessionStopsTheRound: on PostgreSQL, when the server ends the
// session of a relay's round (pg_terminate_backend) while it sends, its
// claim ends with it and a second relay ships the keys at once. The first
// relay lets each key's send in progress finish and sends nothing more: no
// more events of the batch it had claimed, although its sink would take
// them. Its round reports the lost claim, and each key's versions still
// arrive in order over both relays. (At 88ccaa5 the first relay sent the
// rest of its batch while the second shipped the same keys.)
func TestLostSessionStopsTheRound(t *testing.T) {
	b := postgresBackend(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := b.handle(t) // the writer's, the second relay's and the operator's
	entity := entityName(t)
	ks := keys(2)
	const each, stallAt = 20, 3
	writeAll(t, s, entity, ks, each)

	name := strings.ToLower(entity) + "-first-relay"
	first, err := postgres.Open(ctx, withApplicationName(t, b.dsn, name))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	log := newDeliveries()
	sink := &stallingSink{relay: 1, log: log, at: stallAt, stalled: make(chan string, len(ks)), release: make(chan struct{})}
	r1, err := outbox.New(outbox.Config[string, event]{Store: first, Entity: entity, Codec: codec{}, Sink: sink, Logger: quiet(),
		Batch: len(ks) * each, Senders: len(ks), SendTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close(context.Background())
	type result struct {
		sent int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		n, err := r1.RunOnce(ctx)
		done <- result{n, err}
	}()
	for range ks { // both keys' sends of v3 in progress, their claim held
		select {
		case <-sink.stalled:
		case <-ctx.Done():
			t.Fatal("the first relay never reached its stalling sends")
		}
	}
	if n, err := terminate(ctx, s, name); err != nil || n == 0 {
		t.Fatalf("terminated %d sessions of the first relay: %v", n, err)
	}

	// The second relay ships both keys in full meanwhile.
	r2 := newRelay(t, s, entity, &recorder{log: log, relay: 2})
	for {
		if _, err := r2.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		backlog, err := s.OutboxBacklog(ctx, entity)
		if err != nil {
			t.Fatal(err)
		}
		if backlog.Unsent == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the second relay did not ship the keys: %+v", backlog)
		}
	}

	close(sink.release) // the first relay's sends in progress return
	res := <-done
	if res.err == nil || res.sent != 0 {
		t.Fatalf("the first relay's round: %d marked sent, error %v; want none marked and the lost claim reported", res.sent, res.err)
	}
	t.Logf("the first relay's round: %v", res.err)
	byRelay := map[int]map[string][]uint64{1: {}, 2: {}}
	for _, d := range log.all() {
		byRelay[d.relay][d.key] = append(byRelay[d.relay][d.key], d.version)
	}
	for _, k := range ks {
		if got, want := fmt.Sprint(byRelay[1][k]), "[1 2 3]"; got != want {
			t.Errorf("the first relay sent %s's versions %s after its session ended at v3's send; want %s: the send in progress, then nothing", k, got, want)
		}
		if len(byRelay[2][k]) != each {
			t.Errorf("the second relay sent %s's versions %v, want all %d", k, byRelay[2][k], each)
		}
	}
	if _, err := checkOrder(log.all(), wantAll(ks, each)); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteClaimLastsAsLongAsItsRelay is the SQLite side of
// TestLostSessionStopsTheRound: a round's claim is its transaction's
// write lock on the file, held by the relay's own process, which no server
// can end under it. While a round sends, a relay on another handle (as in
// another process) finds the database locked and ships nothing; the first
// relay finishes its batch and marks it; no event goes twice.
func TestSQLiteClaimLastsAsLongAsItsRelay(t *testing.T) {
	b := sqliteBackend(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := b.handle(t)
	entity := entityName(t)
	ks := keys(2)
	const each = 6
	writeAll(t, s, entity, ks, each)

	// The other "process": a handle of its own, like sqlite.Open's but
	// giving up on a lock at once instead of after sqlite.BusyTimeout.
	db, err := sql.Open("sqlite", b.dsn+"?_txlock=immediate&_busy_timeout=10&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	other, err := sqlstore.New(ctx, db, sqlstore.SQLite, sqlstore.ClosingDB())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	log := newDeliveries()
	sink := &stallingSink{relay: 1, log: log, at: 3, stalled: make(chan string, len(ks)), release: make(chan struct{})}
	r1 := newRelay(t, s, entity, sink, func(c *outbox.Config[string, event]) { c.Batch = len(ks) * each; c.Senders = 1 })
	var wg sync.WaitGroup
	var sent int
	var runErr error
	wg.Go(func() { sent, runErr = r1.RunOnce(ctx) })
	<-sink.stalled // k00's v3 in progress

	r2 := newRelay(t, other, entity, &recorder{log: log, relay: 2})
	if n, err := r2.RunOnce(ctx); err == nil || n != 0 {
		t.Fatalf("a second relay's round while the first holds the file: %d sent, error %v; want nothing, and the lock reported", n, err)
	}
	close(sink.release)
	<-sink.stalled // k01's v3, after k00's events
	wg.Wait()
	if runErr != nil || sent != len(ks)*each {
		t.Fatalf("the first relay's round: %d marked sent, %v; want all %d", sent, runErr, len(ks)*each)
	}
	if n, err := r2.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("the second relay after the first committed: %d sent, %v; want nothing left", n, err)
	}
	resent, err := checkOrder(log.all(), wantAll(ks, each))
	if err != nil || resent != 0 {
		t.Fatalf("%d re-sends; order: %v", resent, err)
	}
	for _, d := range log.all() {
		if d.relay != 1 {
			t.Fatalf("relay %d sent %s v%d", d.relay, d.key, d.version)
		}
	}
}
