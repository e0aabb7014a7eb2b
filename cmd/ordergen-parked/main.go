package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv("ORDERGEN_STORE"))
	stop()
	os.Exit(code)
}

const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

const usage = `usage: ordergen-parked [-store DSN] [-create] COMMAND
  list [NAMESPACE]                          parked keys with their reasons, and pending requests
  show NAMESPACE KEY                        a key's parked events, in order
  replay [-wait DURATION] NAMESPACE KEY     ask the running service to replay a key
  discard [-wait DURATION] NAMESPACE KEY    ask the running service to discard a key
  cancel-attempt [-wait DURATION] NAMESPACE KEY
                                            ask it to cancel the key's running attempt
  park-now [-wait DURATION] NAMESPACE KEY   ask it to park the key now with its backlog
  wait [-timeout DURATION] ID               wait for a request's result
  cancel ID                                 withdraw a request no service has taken up
  requests [-n N]                           the latest requests and their results
  serve [-addr HOST:PORT] [-actions]        the web console over the store
  outbox [list|show|retry|discard|seed ...] the transactional outbox's keys that do not flow
DSN: a postgres:// URL or a SQLite file path (default: $ORDERGEN_STORE); a
SQLite file that does not exist is an error, unless -create makes it.
NAMESPACE: a subscriber's name, "Account" or "Account/audit".
`

// errUsage marks an error that the usage text follows.
var errUsage = errors.New("usage")

// pollEvery is how often wait looks at a request.
const pollEvery = 200 * time.Millisecond

// run is the whole command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, defaultStore string) int {
	// Whatever the store holds is shown, never executed (see terminal).
	stdout, stderr = terminal{stdout}, terminal{stderr}
	fs := flag.NewFlagSet("ordergen-parked", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	store := fs.String("store", defaultStore, "")
	create := fs.Bool("create", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	if cmd == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	c, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "ordergen-parked: unknown command %q%s\n%s", cmd, suggest(cmd, commandNames()), usage)
		return exitUsage
	}
	if *store == "" {
		fmt.Fprintf(stderr, "ordergen-parked: no store: give -store DSN or set ORDERGEN_STORE\n%s", usage)
		return exitUsage
	}
	if err := mustExist(*store, *create); err != nil {
		fmt.Fprintf(stderr, "ordergen-parked: %v\n", err)
		return exitFail
	}
	s, err := dsn.Open(ctx, *store)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen-parked: open %s: %v\n", dsn.Redact(*store), err)
		return exitFail
	}
	defer s.Close()
	err = c(ctx, s, rest, stdout)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "ordergen-parked %s: %v\n%s", cmd, err, usage)
		return exitUsage
	}
	fmt.Fprintf(stderr, "ordergen-parked %s: %v\n", cmd, err)
	return exitFail
}

// mustExist refuses a SQLite store whose file does not exist, unless
// create: opening it would create an empty store, and a mistyped path would
// look like a store with nothing parked.
func mustExist(store string, create bool) error {
	path, ok := dsn.SQLitePath(store)
	if !ok || create {
		return nil
	}
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no SQLite store at %s: the file does not exist (check -store or $ORDERGEN_STORE; -create makes an empty store there)", path)
	}
	if err != nil {
		return fmt.Errorf("SQLite store %s: %w", path, err)
	}
	return nil
}

type command func(ctx context.Context, s *sqlstore.Store, args []string, out io.Writer) error

var commands = map[string]command{
	"list":           list,
	"show":           show,
	"replay":         requestCommand(sqlstore.Replay),
	"discard":        requestCommand(sqlstore.Discard),
	"cancel-attempt": requestCommand(sqlstore.CancelAttempt),
	"park-now":       requestCommand(sqlstore.ParkNow),
	"wait":           wait,
	"cancel":         cancel,
	"requests":       requests,
	"serve":          serve,
	"outbox":         outboxCommand,
}

// commandNames returns the names of the commands, for suggestions.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
