package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
	if len(a) == 1 {
		if err := checkNamespace(ctx, s, a[0]); err != nil {
			return err
		}
	} else if namespaces, err = s.ParkedNamespaces(ctx); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	rows := 0
	for _, ns := range namespaces {
		keys, err := s.Parks(ns).Keys(ctx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if rows == 0 {
				fmt.Fprintln(tw, "NAMESPACE\tKEY\tEVENTS\tSINCE\tREASON")
			}
			rows++
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", visible(ns), quote(k.Key), k.Events, k.Since.UTC().Format(time.RFC3339), oneLine(k.Reason))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows == 0 {
		if err := nothingParked(ctx, s, a, out); err != nil {
			return err
		}
	}
	return pendingRequests(ctx, s, a, out)
}

// nothingParked says that nothing is parked, and in which namespaces of the
// store (so that a reader sees it is the store they meant).
func nothingParked(ctx context.Context, s *sqlstore.Store, only []string, out io.Writer) error {
	if len(only) == 1 {
		_, err := fmt.Fprintf(out, "no key is parked in %s\n", quote(only[0]))
		return err
	}
	known, err := s.Namespaces(ctx)
	if err != nil {
		return err
	}
	if len(known) == 0 {
		_, err = fmt.Fprintln(out, "no key is parked, and no subscriber has versions or states in this store")
		return err
	}
	_, err = fmt.Fprintf(out, "no key is parked (namespaces in this store: %s)\n", visibleList(known))
	return err
}

// pendingRequests lists the requests not finished, of the namespace in only
// when it holds one, with their age, after a blank line.
func pendingRequests(ctx context.Context, s *sqlstore.Store, only []string, out io.Writer) error {
	reqs, err := s.Unfinished(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	n := 0
	for _, r := range reqs {
		if len(only) == 1 && r.Namespace != only[0] {
			continue
		}
		if n == 0 {
			fmt.Fprintln(tw, "\nREQUEST\tACTION\tNAMESPACE\tKEY\tAGE\tSTATE")
		}
		n++
		state := fmt.Sprintf("pending: no service has taken it up (ordergen-parked cancel %d withdraws it)", r.ID)
		if !r.Claimed.IsZero() {
			state = "taken up " + age(now, r.Claimed) + " ago, not finished"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, visible(string(r.Action)), visible(r.Namespace), quote(r.Key), age(now, r.Requested), state)
	}
	return tw.Flush()
}

// age returns how long ago t was, to the second (to the millisecond under a
// second).
func age(now, t time.Time) string {
	d := now.Sub(t)
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func show(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("show", flag.ContinueOnError), in, 2, false)
	if err != nil {
		return err
	}
	events, err := parkedKey(ctx, s, a[0], a[1])
	if err != nil {
		return err
	}
	for _, ev := range events {
		fmt.Fprintf(out, "seq %d  %s  attempts %d  parked %s\n", ev.Seq, visible(ev.Event.Name), ev.Attempts, ev.At.UTC().Format(time.RFC3339Nano))
		if ev.Err != "" {
			fmt.Fprintf(out, "  error: %s\n", oneLine(ev.Err))
		}
		fmt.Fprintf(out, "  %s\n", payload(ev.Event.Data))
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
		if action == sqlstore.Replay || action == sqlstore.Discard {
			if _, err := parkedKey(ctx, s, a[0], a[1]); err != nil {
				return err
			}
		}
		// The store cannot tell what runs: cancel-attempt and park-now go
		// to the service as they are, which answers for a key that does not
		// run or wait.
		r, err := s.Request(ctx, a[0], a[1], action)
		if err != nil {
			return err
		}
		if *wait <= 0 {
			fmt.Fprintf(out, "request %d: %s %s in %s, for the running service to carry out (ordergen-parked wait %d; ordergen-parked cancel %d withdraws it)\n", r.ID, action, quote(a[1]), a[0], r.ID, r.ID)
			return nil
		}
		fmt.Fprintf(out, "request %d: %s %s in %s, for the running service to carry out; waiting up to %v\n", r.ID, action, quote(a[1]), a[0], *wait)
		return awaitResult(ctx, s, r.ID, *wait, true, out)
	}
}

func wait(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	timeout := fs.Duration("timeout", time.Minute, "")
	a, err := args(fs, in, 1, false)
	if err != nil {
		return err
	}
	id, err := requestID(a[0])
	if err != nil {
		return err
	}
	return awaitResult(ctx, s, id, *timeout, false, out)
}

func requestID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: request ID %q is not a number", errUsage, arg)
	}
	return id, nil
}

// awaitResult polls request id until it is done or timeout passes (or ctx
// ends), and fails when its result is an error or a cancellation. When the
// wait gives up on a request no service has taken up and withdraw is set
// (the request is the command's own), it cancels the request, so that no
// service carries it out after its asker has gone.
func awaitResult(ctx context.Context, s *sqlstore.Store, id int64, timeout time.Duration, withdraw bool, out io.Writer) error {
	waitCtx, stop := context.WithTimeout(ctx, timeout)
	defer stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		r, err := s.RequestByID(waitCtx, id)
		if err != nil && waitCtx.Err() == nil {
			return err
		}
		if err == nil && !r.Pending() {
			return result(r, out)
		}
		select {
		case <-waitCtx.Done():
			return gaveUp(ctx, s, id, timeout, withdraw, out)
		case <-tick.C:
		}
	}
}

// result prints the result of a finished request and fails for an error or
// a cancellation.
func result(r sqlstore.Request, out io.Writer) error {
	fmt.Fprintf(out, "request %d: %s\n", r.ID, oneLine(r.Result))
	switch {
	case r.Cancelled():
		return fmt.Errorf("request %d was cancelled: no service carried it out", r.ID)
	case strings.HasPrefix(r.Result, "error:"):
		return fmt.Errorf("request %d failed", r.ID)
	}
	return nil
}

// gaveUp says why a wait for request id ended without its result; with
// withdraw, it cancels the request unless a service has taken it up.
func gaveUp(ctx context.Context, s *sqlstore.Store, id int64, timeout time.Duration, withdraw bool, out io.Writer) error {
	why := fmt.Sprintf("not done after %v", timeout)
	if ctx.Err() != nil {
		why = "not done when the wait was interrupted"
	}
	// The store is still usable when ctx ended (an interrupt).
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	if withdraw {
		r, err := s.CancelRequest(ctx, id, "the command that asked gave up waiting ("+why+")")
		switch {
		case err == nil && r.Cancelled():
			return fmt.Errorf("request %d %s: no running service for %s took it up, so it is cancelled and no service will carry it out later (start the service with a sqlstore.Server for the entity, then ask again)", id, why, visible(r.Namespace))
		case err == nil:
			return result(r, out) // finished just now
		case !errors.Is(err, sqlstore.ErrRequestTaken):
			return fmt.Errorf("request %d %s, and could not be cancelled: %w", id, why, err)
		}
	}
	r, err := s.RequestByID(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("request %d %s: %w", id, why, err)
	case !r.Pending():
		return result(r, out)
	case r.Claimed.IsZero():
		return fmt.Errorf("request %d %s: no running service for %s has taken it up; it stays pending (ordergen-parked cancel %d withdraws it)", id, why, visible(r.Namespace), id)
	}
	return fmt.Errorf("request %d %s: taken up at %s, not finished (ordergen-parked wait %d)", id, why, r.Claimed.UTC().Format(time.RFC3339), id)
}

func cancel(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("cancel", flag.ContinueOnError), in, 1, false)
	if err != nil {
		return err
	}
	id, err := requestID(a[0])
	if err != nil {
		return err
	}
	r, err := s.CancelRequest(ctx, id, "by ordergen-parked cancel")
	switch {
	case errors.Is(err, sqlstore.ErrRequestTaken) && r.Pending():
		return fmt.Errorf("request %d cannot be cancelled: a service took it up at %s (ordergen-parked wait %d)", id, r.Claimed.UTC().Format(time.RFC3339), id)
	case errors.Is(err, sqlstore.ErrRequestTaken):
		return fmt.Errorf("request %d cannot be cancelled: it is finished (%s)", id, oneLine(r.Result))
	case err != nil:
		return err
	}
	fmt.Fprintf(out, "request %d (%s %s in %s) cancelled: no service will carry it out\n", id, visible(string(r.Action)), quote(r.Key), visible(r.Namespace))
	return nil
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
			result = "pending: no service has taken it up"
		case r.Pending():
			result = "taken up, not finished"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, visible(string(r.Action)), visible(r.Namespace), quote(r.Key), r.Requested.UTC().Format(time.RFC3339), oneLine(result))
	}
	return tw.Flush()
}
