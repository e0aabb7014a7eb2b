package brokerdemo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// Config sizes an example's run.
type Config struct {
	Accounts, Events int
	Seed             uint64
	Slow             time.Duration
}

// Main is an example's main: it reads the flags (defaults from def), runs
// the scenario with a two-minute limit, writing its report to standard
// output, and exits 1 when run fails.
func Main(name string, def Config, run func(ctx context.Context, out io.Writer, cfg Config) error) {
	cfg := def
	flag.IntVar(&cfg.Accounts, "accounts", def.Accounts, "number of accounts")
	flag.IntVar(&cfg.Events, "events", def.Events, "events per account")
	flag.Uint64Var(&cfg.Seed, "seed", def.Seed, "seed of the generated stream")
	flag.DurationVar(&cfg.Slow, "slow", def.Slow, "handler latency of every seventh account (the others take none)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, name+" example:", err)
		os.Exit(1)
	}
}
