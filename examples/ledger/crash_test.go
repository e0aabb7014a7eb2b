package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/durable"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

// crashEnv carries the crash child's job: the DSN of its store.
const crashEnv = "ORDERGEN_LEDGER_CRASH_CHILD"

// crashMarker is the line the child prints when it is stopped between a
// handler's write and its commit.
const crashMarker = "STOPPED-BEFORE-COMMIT"

const crashSeed = 5

// crashGroupedEnv, set, makes the crash child stop in a group's shared
// transaction (TestCrashMidGroup) rather than at stopAccount's stopVersion.
const crashGroupedEnv = "ORDERGEN_LEDGER_CRASH_GROUPED"

// sharedMarker starts the line on which the grouped crash child lists the
// events written in the stopped group's transaction, as JSON.
const sharedMarker = "SHARED-TX-WRITES "

// TestCrashChild is the child process of TestCrashMidTransaction: it runs
// the transactional ledger until a handler has written acct-2 v7 but not
// committed, says so, and waits there to be killed.
func TestCrashChild(t *testing.T) {
	name := os.Getenv(crashEnv)
	if name == "" {
		t.Skip("child process of TestCrashMidTransaction")
	}
	ctx := context.Background()
	store, err := dsn.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newDurableLedger(ctx, store, crashSeed, false)
	if err != nil {
		t.Fatal(err)
	}
	var opts []ledger.AccountOption
	if os.Getenv(crashGroupedEnv) != "" {
		// Stopped in a group's transaction that other keys wrote in, and
		// never evicted from it: the group stays open, written, until the
		// kill.
		l.book.stopInSharedTx(0)
		opts = append(opts, func(c *ledger.AccountConfig) { c.Group.MaxWork = time.Hour })
	} else {
		l.book.stopBeforeCommit(stopAccount, stopVersion)
	}
	d, err := l.start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = publishAll(ctx, d, l.seq) }()
	<-l.book.stopped
	if shared := l.book.sharedStop(); shared != nil {
		out, err := json.Marshal(shared)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(sharedMarker + string(out))
	}
	fmt.Println(crashMarker)
	select {} // killed here, the transaction open
}

// crashDatabase returns the DSN of an empty database for one run of the
// ledger: a new SQLite file, or a new schema of the PostgreSQL database of
// ORDERGEN_TEST_POSTGRES (dropped when the test ends).
func crashDatabase(t *testing.T, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		return filepath.Join(t.TempDir(), "ledger.db")
	}
	base := os.Getenv("ORDERGEN_TEST_POSTGRES")
	if base == "" {
		t.Skip("PostgreSQL crash test skipped: set ORDERGEN_TEST_POSTGRES to a database DSN to run it; .ci/run starts one")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "ledger_crash_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// runToEnd delivers the whole stream to a fresh process on the store and
// returns the final balances and the number of events applied twice.
func runToEnd(t *testing.T, name string, fresh bool) (map[string]int64, int, *durableLedger) {
	t.Helper()
	ctx := t.Context()
	store, err := dsn.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	l, err := newDurableLedger(ctx, store, crashSeed, fresh)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.start()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.deliver(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	balances, twice, err := l.book.snapshot(ctx, store.DB())
	if err != nil {
		t.Fatal(err)
	}
	return balances, twice, l
}

// preparedCrashDatabase returns the DSN of a fresh crash database of
// dialect with the store's and the book's tables made, empty.
func preparedCrashDatabase(t *testing.T, dialect string) string {
	t.Helper()
	crashed := crashDatabase(t, dialect)
	prepare, err := dsn.Open(t.Context(), crashed)
	if err != nil {
		t.Fatal(err)
	}
	defer prepare.Close()
	if _, err := newDurableLedger(t.Context(), prepare, crashSeed, true); err != nil {
		t.Fatal(err)
	}
	return crashed
}

// TestCrashMidTransaction kills a process whose handler has written an
// event but not committed it, restarts on the same store and redelivers
// every event: the final state equals that of an uninterrupted run and of
// in-order application, and no event was applied twice.
func TestCrashMidTransaction(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			crashed := preparedCrashDatabase(t, dialect)

			committedAtKill := crashChild(t, crashed)
			balances, twice, l := runToEnd(t, crashed, false)
			if twice != 0 {
				t.Fatalf("%d events were applied twice", twice)
			}
			if !maps.Equal(balances, l.want) {
				t.Fatalf("after the crash and a restart: balances %v, in-order application gives %v", balances, l.want)
			}
			uninterrupted, twice, _ := runToEnd(t, crashDatabase(t, dialect), true)
			if twice != 0 || !maps.Equal(balances, uninterrupted) {
				t.Fatalf("balances %v differ from an uninterrupted run's %v (%d applied twice there)", balances, uninterrupted, twice)
			}
			t.Logf("%s: killed with %d of %d events committed; the restart reached the uninterrupted run's state", dialect, committedAtKill, len(l.seq))
		})
	}
}

// crashChild runs TestCrashChild on the store, kills it once it is stopped
// before a commit, and returns how many events it had committed.
func crashChild(t *testing.T, name string, env ...string) int {
	n, _ := crashChildLines(t, name, env...)
	return n
}

// crashChildLines is crashChild that also returns what the child printed
// before it was killed; env is added to the child's environment.
func crashChildLines(t *testing.T, name string, env ...string) (int, []string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), crashEnv+"="+name), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	scan := bufio.NewScanner(stdout)
	stopped := false
	for scan.Scan() {
		lines = append(lines, scan.Text())
		if scan.Text() == crashMarker {
			stopped = true
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() { // drain, so that Wait returns
		for scan.Scan() {
		}
	}()
	_ = cmd.Wait()
	if !stopped {
		out, _ := json.Marshal(lines)
		t.Fatalf("the child never reached the stop point: %s", out)
	}
	// What the killed process left: its committed events only.
	store, l := reopenCrashLedger(t, name)
	defer store.Close()
	n, err := l.committed(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n >= len(l.seq) {
		t.Fatalf("the child committed all %d events: it did not crash mid-run", n)
	}
	if len(env) == 0 {
		assertNotCommitted(t, store, l)
	}
	return n, lines
}

// assertNotCommitted fails if the stopped event's write survived the kill.
func assertNotCommitted(t *testing.T, store *sqlstore.Store, l *durableLedger) {
	t.Helper()
	var n int
	if err := store.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+l.book.applied+` WHERE account = $1 AND version = $2`,
		stopAccount, stopVersion).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%s v%d was written and not committed, yet %d copies survived the kill", stopAccount, stopVersion, n)
	}
}

// TestCrashMidGroup kills a process in the middle of a group commit: the
// group's shared transaction holds the writes of several accounts, one
// handler is blocked in it after its write, and nothing is committed. None
// of those writes survives the kill; a restart on the same store with every
// event redelivered applies each event once, and every account ends at its
// last version with the balance of in-order application.
func TestCrashMidGroup(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			crashed := preparedCrashDatabase(t, dialect)

			committedAtKill, lines := crashChildLines(t, crashed, crashGroupedEnv+"=1")
			shared := sharedWrites(t, lines)
			accounts := map[string]bool{}
			for _, w := range shared {
				accounts[w.Account] = true
			}
			if len(accounts) < 2 {
				t.Fatalf("the stopped transaction holds writes of %d accounts (%v): not a group of several keys", len(accounts), shared)
			}
			assertNoneCommitted(t, crashed, shared)

			balances, twice, l := runToEnd(t, crashed, false)
			if twice != 0 {
				t.Fatalf("%d events were applied twice", twice)
			}
			if !maps.Equal(balances, l.want) {
				t.Fatalf("after the crash and a restart: balances %v, in-order application gives %v", balances, l.want)
			}
			assertLastVersionsIn(t, crashed)
			t.Logf("%s: killed with %d of %d events committed and a group of %d accounts (%d events) written, uncommitted; the restart applied each event once",
				dialect, committedAtKill, len(l.seq), len(accounts), len(shared))
		})
	}
}

// sharedWrite is an event written in the stopped group's transaction, as
// the grouped crash child lists it.
type sharedWrite struct {
	Account string
	Version uint64
}

// sharedWrites returns the events the grouped crash child wrote in the
// transaction it stopped in.
func sharedWrites(t *testing.T, lines []string) []sharedWrite {
	t.Helper()
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, sharedMarker); ok {
			var out []sharedWrite
			if err := json.Unmarshal([]byte(rest), &out); err != nil {
				t.Fatalf("the child's list of shared writes %q: %v", rest, err)
			}
			return out
		}
	}
	t.Fatalf("the grouped crash child listed no shared writes: %q", lines)
	return nil
}

// reopenCrashLedger opens the crash database name again, as the next
// process would, and the ledger over it. The caller closes the store.
func reopenCrashLedger(t *testing.T, name string) (*sqlstore.Store, *durableLedger) {
	t.Helper()
	store, err := dsn.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newDurableLedger(t.Context(), store, crashSeed, false)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	return store, l
}

// assertNoneCommitted fails if any of the group's writes survived the kill.
func assertNoneCommitted(t *testing.T, name string, writes []sharedWrite) {
	t.Helper()
	store, l := reopenCrashLedger(t, name)
	defer store.Close()
	for _, w := range writes {
		var n int
		if err := store.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+l.book.applied+` WHERE account = $1 AND version = $2`,
			w.Account, int64(w.Version)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s v%d was written in the open group and not committed, yet %d copies survived the kill", w.Account, w.Version, n)
		}
	}
}

// assertLastVersionsIn fails unless every account's stored version in the
// store named name is its last event's.
func assertLastVersionsIn(t *testing.T, name string) {
	t.Helper()
	store, err := dsn.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	assertLastVersions(t, store)
}

// assertLastVersions fails unless every account's stored version is its
// last event's.
func assertLastVersions(t *testing.T, store *sqlstore.Store) {
	t.Helper()
	versions := durable.EncodedVersions[string](store.Versions(string(ledger.AccountFirstSubscriber)))
	for i := range durableAccounts {
		account := fmt.Sprintf("acct-%d", i)
		v, err := versions.Version(t.Context(), account)
		if err != nil {
			t.Fatal(err)
		}
		if v != durableEvents {
			t.Errorf("%s ends at version %d, its last event is %d", account, v, durableEvents)
		}
	}
}
