package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// args parses a command's flags and wants exactly n arguments (at most n
// when optional).
func args(fs *flag.FlagSet, in []string, n int, optional bool) ([]string, error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(in); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	got := fs.NArg()
	if got > n || (!optional && got < n) {
		return nil, fmt.Errorf("%w: %d arguments, want %d", errUsage, got, n)
	}
	return fs.Args(), nil
}

func list(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("list", flag.ContinueOnError), in, 1, true)
	if err != nil {
		return err
	}
	namespaces := a
	if len(a) == 0 {
		if namespaces, err = s.ParkedNamespaces(ctx); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKEY\tEVENTS\tSINCE\tREASON")
	for _, ns := range namespaces {
		keys, err := s.Parks(ns).Keys(ctx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", ns, quote(k.Key), k.Events, k.Since.UTC().Format(time.RFC3339), oneLine(k.Reason))
		}
	}
	return tw.Flush()
}

func show(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("show", flag.ContinueOnError), in, 2, false)
	if err != nil {
		return err
	}
	events, err := runtime.ReadPark(ctx, s.Parks(a[0]), a[1])
	if err != nil {
		return err
	}
	if len(events) == 0 {
		return fmt.Errorf("key %s is not parked in %s", quote(a[1]), a[0])
	}
	for _, ev := range events {
		fmt.Fprintf(out, "seq %d  %s  attempts %d  parked %s\n", ev.Seq, ev.Event.Name, ev.Attempts, ev.At.UTC().Format(time.RFC3339Nano))
		if ev.Err != "" {
			fmt.Fprintf(out, "  error: %s\n", oneLine(ev.Err))
		}
		fmt.Fprintf(out, "  %s\n", printable(ev.Event.Data))
	}
	return nil
}

func requestCommand(action sqlstore.Action) command {
	return func(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
		fs := flag.NewFlagSet(string(action), flag.ContinueOnError)
		wait := fs.Duration("wait", 0, "")
		a, err := args(fs, in, 2, false)
		if err != nil {
			return err
		}
		r, err := s.Request(ctx, a[0], a[1], action)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "request %d: %s %s in %s, for the running service to carry out (ordergen-parked wait %d)\n", r.ID, action, quote(a[1]), a[0], r.ID)
		if *wait <= 0 {
			return nil
		}
		return awaitResult(ctx, s, r.ID, *wait, out)
	}
}

func wait(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	timeout := fs.Duration("timeout", time.Minute, "")
	a, err := args(fs, in, 1, false)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(a[0], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: request ID %q is not a number", errUsage, a[0])
	}
	return awaitResult(ctx, s, id, *timeout, out)
}

// awaitResult polls request id until it is done or timeout passes, and
// fails when its result is an error.
func awaitResult(ctx context.Context, s *sqlstore.Store, id int64, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		r, err := s.RequestByID(ctx, id)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if err == nil && !r.Pending() {
			fmt.Fprintf(out, "request %d: %s\n", id, r.Result)
			if strings.HasPrefix(r.Result, "error:") {
				return fmt.Errorf("request %d failed", id)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			state := "pending: no running service for this entity has taken it up"
			if !r.Claimed.IsZero() {
				state = "taken up at " + r.Claimed.UTC().Format(time.RFC3339) + ", not finished"
			}
			return fmt.Errorf("request %d not done after %v (%s)", id, timeout, state)
		case <-tick.C:
		}
	}
}

func requests(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	fs := flag.NewFlagSet("requests", flag.ContinueOnError)
	n := fs.Int("n", 20, "")
	if _, err := args(fs, in, 0, false); err != nil {
		return err
	}
	list, err := s.Requests(ctx, *n)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTION\tNAMESPACE\tKEY\tREQUESTED\tRESULT")
	for _, r := range list {
		result := r.Result
		switch {
		case r.Claimed.IsZero():
			result = "pending"
		case r.Pending():
			result = "taken up, not finished"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Action, r.Namespace, quote(r.Key), r.Requested.UTC().Format(time.RFC3339), oneLine(result))
	}
	return tw.Flush()
}

// quote quotes a key when it would not read as one word.
func quote(key string) string {
	if key == "" || strings.ContainsAny(key, " \t\n\"'") || strconv.Quote(key) != `"`+key+`"` {
		return strconv.Quote(key)
	}
	return key
}

// oneLine keeps a reason on its line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// printable returns data as text when it is printable UTF-8, else quoted.
func printable(data []byte) string {
	s := string(data)
	if strconv.CanBackquote(s) {
		return s
	}
	return strconv.Quote(s)
}
