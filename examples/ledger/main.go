// Command ledger is ordergen's runnable example. It drives the code generated
// from examples/schema.yaml (package ledger in examples/gen) through the
// runtime and prints a short report that shows the guarantees at work:
//
//   - in-order ledger balances, with accounts handled in parallel, several
//     publishers and random handler latencies;
//   - a hot account with half of all events, which does not stall the others;
//   - a transient failure retried in place, the account's later events
//     waiting behind it;
//   - a permanent failure that parks the account, then a replay after the
//     fault is fixed;
//   - late order transitions skipped by the state guard, and rider locations
//     conflated;
//   - the handling patterns: an account that lost an event resynced from its
//     source of truth past the resequencer's bound, wallets credited in
//     batches (one transaction per batch), and a burst of customer
//     notifications coalesced into one call;
//   - effectively-once handling on a durable store: handlers that write in
//     the store's transaction, a process stopped between a write and its
//     commit, a restart with full redelivery, and a parked account that
//     survives a restart;
//   - the transactional outbox: balances and their events written in one
//     transaction each (AccountOutbox numbers the events, several writers
//     at once), relayed to Kafka (an in-process kfake cluster) and consumed
//     behind the version guards, with a relay that crashes between sending
//     a round and marking it.
//
// The guards' versions and states and the parked events live in a durable
// store: by default the embedded SQLite file ledger.db in the current
// folder; -store names another (a SQLite file path, or a postgres:// URL).
// The example empties its own namespaces (Account, Order, Rider, Wallet), the
// outbox of Account and its tables (ledger_example_*) in that store first,
// and leaves one account parked in it at the end, on purpose (a compliance
// review its handler refuses), for ordergen-parked and the console to show.
//
// Run it from the repository root with: go run ./examples/ledger
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.accounts, "accounts", 40, "number of cold accounts")
	flag.IntVar(&cfg.events, "events", 20, "events per cold account")
	flag.DurationVar(&cfg.latency, "latency", time.Millisecond, "upper bound of a handler's random latency (from half of it)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated streams and latencies")
	flag.StringVar(&cfg.store, "store", "ledger.db", "durable store, left with a parked key: a SQLite file path or a postgres:// URL (\"\": a temporary SQLite file)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ledger example:", err)
		os.Exit(1)
	}
}

// config sizes the example's run.
type config struct {
	accounts int
	events   int
	latency  time.Duration
	seed     uint64
	store    string // "": a temporary SQLite file, removed at the end
}

// run plays every scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg config) error {
	store, where, closeStore, err := openStore(ctx, cfg.store)
	if err != nil {
		return err
	}
	defer closeStore()
	fmt.Fprintf(out, "ordergen example: the ledger schema on per-key lanes (%s)\n", where)
	for _, ns := range []string{"Account", "Order", "Rider", "Wallet"} {
		if err := store.DeleteNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if err := runLedger(ctx, out, cfg, store); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := runOrders(ctx, out, store); err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	if err := runRiders(ctx, out, store); err != nil {
		return fmt.Errorf("riders: %w", err)
	}
	if err := runPatterns(ctx, out, store); err != nil {
		return fmt.Errorf("patterns: %w", err)
	}
	if err := runDurable(ctx, out, store, cfg.seed); err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	if err := runOutbox(ctx, out, store, cfg.seed); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if err := runLeftParked(ctx, out, store, shellWord(dsn.Redact(cfg.store)), cfg.seed); err != nil {
		return fmt.Errorf("left parked: %w", err)
	}
	return nil
}

// shellWord returns s as one word of a shell command: as it is when it
// holds only characters no shell treats specially, else single-quoted.
func shellWord(s string) string {
	if s == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openStore opens the store named by name, or a SQLite file in a new
// temporary directory when name is empty. It returns a description for the
// report and a function that closes the store (and removes the directory).
func openStore(ctx context.Context, name string) (*sqlstore.Store, string, func(), error) {
	if name != "" {
		s, err := dsn.Open(ctx, name)
		if err != nil {
			return nil, "", nil, err
		}
		return s, "store " + dsn.Redact(name), func() { s.Close() }, nil
	}
	dir, err := os.MkdirTemp("", "ordergen-ledger-")
	if err != nil {
		return nil, "", nil, fmt.Errorf("temporary store: %w", err)
	}
	s, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", nil, err
	}
	return s, "SQLite store in a temporary file", func() { s.Close(); os.RemoveAll(dir) }, nil
}
