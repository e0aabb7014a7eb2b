package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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

const usage = `usage: ordergen-parked [-store DSN] COMMAND
  list [NAMESPACE]                          parked keys with their reasons
  show NAMESPACE KEY                        a key's parked events, in order
  replay [-wait DURATION] NAMESPACE KEY     ask the running service to replay a key
  discard [-wait DURATION] NAMESPACE KEY    ask the running service to discard a key
  wait [-timeout DURATION] ID               wait for a request's result
  requests [-n N]                           the latest requests and their results
  serve [-addr HOST:PORT] [-actions]        the web console over the store
DSN: a postgres:// URL or a SQLite file path (default: $ORDERGEN_STORE)
`

// errUsage marks an error that the usage text follows.
var errUsage = errors.New("usage")

// pollEvery is how often wait looks at a request.
const pollEvery = 200 * time.Millisecond

// run is the whole command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, defaultStore string) int {
	fs := flag.NewFlagSet("ordergen-parked", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	store := fs.String("store", defaultStore, "")
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
		fmt.Fprintf(stderr, "ordergen-parked: unknown command %q\n%s", cmd, usage)
		return exitUsage
	}
	if *store == "" {
		fmt.Fprintf(stderr, "ordergen-parked: no store: give -store DSN or set ORDERGEN_STORE\n%s", usage)
		return exitUsage
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

type command func(ctx context.Context, s *sqlstore.Store, args []string, out io.Writer) error

var commands = map[string]command{
	"list":     list,
	"show":     show,
	"replay":   requestCommand(sqlstore.Replay),
	"discard":  requestCommand(sqlstore.Discard),
	"wait":     wait,
	"requests": requests,
	"serve":    serve,
}
