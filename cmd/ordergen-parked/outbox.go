package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// The outbox commands act on the transactional outbox's keys that do not
// flow (see runtime/outbox): unlike a consumer's park they need no
// service, so retry and discard act in the store at once, and the next
// relay round sees them.

const outboxUsage = `usage: ordergen-parked [-store DSN] outbox COMMAND
  list [ENTITY]                  each entity's unsent events, then its parked and retrying keys
  show [-n N] ENTITY KEY         a key's unsent events, in version order (the first N, default 20)
  retry ENTITY KEY               let a parked or retrying key flow again at once
  discard ENTITY KEY             drop a parked or retrying key's unsent events (its consumers see a gap)
  seed ENTITY KEY VERSION        number a key's first outbox event VERSION+1 (before it has any)
ENTITY: the schema's entity ("Account"), as the generated AccountOutbox writes it.
`

var outboxCommands = map[string]command{
	"list":    outboxList,
	"show":    outboxShow,
	"retry":   outboxRetry,
	"discard": outboxDiscard,
	"seed":    outboxSeed,
}

func outboxCommand(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	if len(in) == 0 {
		return outboxList(ctx, s, nil, out)
	}
	c, ok := outboxCommands[in[0]]
	if !ok {
		names := make([]string, 0, len(outboxCommands))
		for name := range outboxCommands {
			names = append(names, name)
		}
		slices.Sort(names)
		return fmt.Errorf("%w: unknown outbox command %q%s\n%s", errUsage, in[0], suggest(in[0], names), outboxUsage)
	}
	return c(ctx, s, in[1:], out)
}

// checkEntity returns an error unless entity used the store's outbox.
func checkEntity(ctx context.Context, s *sqlstore.Store, entity string) error {
	known, err := s.OutboxEntities(ctx)
	if err != nil {
		return err
	}
	return checkKnown(entity, known, "entity %s has no outbox in this store%s",
		"no entity has used the outbox of this store", "entities")
}

func outboxList(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("outbox list", flag.ContinueOnError), in, 1, true)
	if err != nil {
		return err
	}
	entities := a
	if len(a) == 1 {
		if err := checkEntity(ctx, s, a[0]); err != nil {
			return err
		}
	} else if entities, err = s.OutboxEntities(ctx); err != nil {
		return err
	}
	if len(entities) == 0 {
		_, err := fmt.Fprintln(out, "no entity has used the outbox of this store")
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTITY\tUNSENT\tOLDEST\tPARKED\tRETRYING")
	var stopped []struct {
		entity string
		key    sqlstore.OutboxKey
	}
	for _, e := range entities {
		b, err := s.OutboxBacklog(ctx, e)
		if err != nil {
			return err
		}
		oldest := "-"
		if !b.Oldest.IsZero() {
			oldest = age(now, b.Oldest) + " ago"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\n", visible(e), b.Unsent, oldest, b.Parked, b.Retrying)
		keys, err := s.OutboxKeys(ctx, e, 0)
		if err != nil {
			return err
		}
		for _, k := range keys {
			stopped = append(stopped, struct {
				entity string
				key    sqlstore.OutboxKey
			}{e, k})
		}
	}
	if len(stopped) > 0 {
		fmt.Fprintln(tw, "\nENTITY\tKEY\tSTATE\tUNSENT\tATTEMPTS\tSINCE\tREASON")
		for _, x := range stopped {
			k := x.key
			state, since := "parked", k.Parked.UTC().Format(time.RFC3339)
			if k.Parked.IsZero() {
				state, since = "retrying", "next try "+k.RetryAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", visible(x.entity), quote(k.Key), state, k.Unsent, k.Attempts, since, oneLine(k.Reason))
		}
	}
	return tw.Flush()
}

func outboxShow(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	fs := flag.NewFlagSet("outbox show", flag.ContinueOnError)
	n := fs.Int("n", 20, "")
	a, err := args(fs, in, 2, false)
	if err != nil {
		return err
	}
	if err := checkEntity(ctx, s, a[0]); err != nil {
		return err
	}
	events, err := s.OutboxEvents(ctx, a[0], a[1], 0, *n)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		v, err := s.OutboxVersion(ctx, a[0], a[1])
		if err != nil {
			return err
		}
		if v == 0 {
			return fmt.Errorf("key %s of %s has no outbox event in this store", quote(a[1]), a[0])
		}
		_, err = fmt.Fprintf(out, "key %s of %s: every event is sent (its last version is %d)\n", quote(a[1]), a[0], v)
		return err
	}
	for _, ev := range events {
		fmt.Fprintf(out, "version %d  %s  appended %s\n  %s\n", ev.Version, visible(ev.Event.Name), ev.Created.UTC().Format(time.RFC3339Nano), payload(ev.Event.Data))
	}
	return nil
}

// stoppedKey returns an error unless key of entity is parked or retrying,
// naming the closest such key.
func stoppedKey(ctx context.Context, s *sqlstore.Store, entity, key string, err error) error {
	if !errors.Is(err, sqlstore.ErrOutboxKeyFlowing) {
		return err
	}
	keys, lerr := s.OutboxKeys(ctx, entity, 0)
	if lerr != nil {
		return lerr
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
	}
	hint := suggest(key, names)
	switch {
	case hint != "":
	case len(names) == 0:
		hint = " (every key of it flows)"
	default:
		hint = fmt.Sprintf(" (%d keys do not flow: ordergen-parked outbox list %s)", len(names), entity)
	}
	return fmt.Errorf("key %s of %s is neither parked nor retrying%s", quote(key), entity, hint)
}

func outboxRetry(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("outbox retry", flag.ContinueOnError), in, 2, false)
	if err != nil {
		return err
	}
	if err := checkEntity(ctx, s, a[0]); err != nil {
		return err
	}
	if err := s.RetryOutboxKey(ctx, a[0], a[1]); err != nil {
		return stoppedKey(ctx, s, a[0], a[1], err)
	}
	_, err = fmt.Fprintf(out, "key %s of %s flows again: the next relay round sends its first unsent event\n", quote(a[1]), a[0])
	return err
}

func outboxDiscard(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("outbox discard", flag.ContinueOnError), in, 2, false)
	if err != nil {
		return err
	}
	if err := checkEntity(ctx, s, a[0]); err != nil {
		return err
	}
	d, err := s.DiscardOutboxKey(ctx, a[0], a[1])
	if err != nil {
		return stoppedKey(ctx, s, a[0], a[1], err)
	}
	if d.Events == 0 {
		_, err = fmt.Fprintf(out, "key %s of %s had no unsent event; it flows again\n", quote(a[1]), a[0])
		return err
	}
	_, err = fmt.Fprintf(out, "discarded %d events of key %s of %s (versions %d to %d); it flows again, and its consumers will see a gap before version %d\n",
		d.Events, quote(a[1]), a[0], d.From, d.To, d.To+1)
	return err
}

func outboxSeed(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	a, err := args(flag.NewFlagSet("outbox seed", flag.ContinueOnError), in, 3, false)
	if err != nil {
		return err
	}
	v, err := strconv.ParseUint(a[2], 10, 64)
	if err != nil || v == 0 {
		return fmt.Errorf("%w: version %q is not a number of 1 or more", errUsage, a[2])
	}
	if err := s.SeedOutbox(ctx, nil, a[0], a[1], v); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "key %s of %s: its first outbox event will be version %d\n", quote(a[1]), a[0], v+1)
	return err
}

// outboxView is the console's view of the store's outboxes: a transport
// whose partitions are the keys that do not flow, over every entity, and
// which retries and discards them at once, as outbox retry and discard do.
type outboxView struct{ store *sqlstore.Store }

var (
	_ inspect.Transport      = outboxView{}
	_ inspect.OutboxOperator = outboxView{}
)

// RetryKey implements inspect.OutboxOperator: outbox retry, from the
// console.
func (v outboxView) RetryKey(ctx context.Context, entity, key string) (inspect.Result, error) {
	if err := v.store.RetryOutboxKey(ctx, entity, key); err != nil {
		return inspect.Result{}, notStopped(err)
	}
	return inspect.Result{Done: true, Message: fmt.Sprintf("key %s of %s flows again: the next relay round sends its first unsent event", quote(key), entity)}, nil
}

// DiscardKey implements inspect.OutboxOperator: outbox discard, from the
// console.
func (v outboxView) DiscardKey(ctx context.Context, entity, key string) (inspect.Result, error) {
	d, err := v.store.DiscardOutboxKey(ctx, entity, key)
	if err != nil {
		return inspect.Result{}, notStopped(err)
	}
	if d.Events == 0 {
		return inspect.Result{Done: true, Message: fmt.Sprintf("key %s of %s had no unsent event; it flows again", quote(key), entity)}, nil
	}
	return inspect.Result{Done: true, Events: d.Events, Message: fmt.Sprintf("discarded %d events of key %s of %s (versions %d to %d); it flows again, and its consumers will see a gap before version %d",
		d.Events, quote(key), entity, d.From, d.To, d.To+1)}, nil
}

// notStopped marks the store's refusal of a key that flows as not parked,
// which the console answers with 409.
func notStopped(err error) error {
	if errors.Is(err, sqlstore.ErrOutboxKeyFlowing) {
		return fmt.Errorf("%w: %w", runtime.ErrNotParked, err)
	}
	return err
}

// outboxShown bounds the keys the view lists per entity.
const outboxShown = 50

func (v outboxView) TransportStatus() inspect.TransportStatus {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := inspect.TransportStatus{Kind: "outbox", Name: "transactional outbox"}
	entities, err := v.store.OutboxEntities(ctx)
	if err != nil {
		st.Name += " (unreadable: " + err.Error() + ")"
		return st
	}
	for _, e := range entities {
		b, err := v.store.OutboxBacklog(ctx, e)
		if err != nil {
			continue
		}
		st.Counters = append(st.Counters,
			inspect.Counter{Name: e + " unsent", Value: int64(b.Unsent)},
			inspect.Counter{Name: e + " parked keys", Value: int64(b.Parked)},
			inspect.Counter{Name: e + " retrying keys", Value: int64(b.Retrying)})
		keys, err := v.store.OutboxKeys(ctx, e, outboxShown)
		if err != nil {
			continue
		}
		for _, k := range keys {
			p := inspect.Partition{Name: e + " " + k.Key, Lag: int64(k.Unsent), Unfinished: k.Unsent, Paused: "retrying", Detail: k.Reason,
				Entity: e, Key: k.Key}
			if !k.Oldest.IsZero() {
				p.OldestUnfinished = time.Since(k.Oldest)
			}
			if !k.Parked.IsZero() {
				p.Paused, p.Parked = "parked", k.Unsent
				p.Detail = "ordergen-parked outbox retry|discard " + e + " " + quote(k.Key) + ": " + k.Reason
			}
			st.Partitions = append(st.Partitions, p)
		}
	}
	return st
}
