package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// rawEvents returns events named after names, with a little data each.
func rawEvents(names ...string) []runtime.ParkedEvent[durable.RawEvent] {
	at := time.Unix(1_700_000_000, 123456789).UTC()
	out := make([]runtime.ParkedEvent[durable.RawEvent], len(names))
	for i, n := range names {
		out[i] = runtime.ParkedEvent[durable.RawEvent]{
			Event:    durable.RawEvent{Name: n, Data: []byte(`{"n":"` + n + `"}`)},
			At:       at.Add(time.Duration(i) * time.Millisecond),
			Attempts: i + 1,
		}
	}
	out[0].Err = "failed: " + names[0]
	return out
}

// names returns the event names of events, in order.
func names(events []runtime.ParkedEvent[durable.RawEvent]) string {
	var b strings.Builder
	for i, ev := range events {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ev.Event.Name)
	}
	return b.String()
}

// checkSeqs fails unless the events' Seq increase and are not zero.
func checkSeqs(t *testing.T, events []runtime.ParkedEvent[durable.RawEvent]) {
	t.Helper()
	var last uint64
	for _, ev := range events {
		if ev.Seq <= last {
			t.Fatalf("Seq %d after %d: want increasing, from 1 (events %s)", ev.Seq, last, names(events))
		}
		last = ev.Seq
	}
}

func keyList(keys []runtime.ParkedKey[string]) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", k.Key, k.Events)
	}
	return b.String()
}

func (s suite) parksEmpty(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	if keys := must(ps.Keys(ctx))(t); len(keys) != 0 {
		t.Fatalf("keys of an empty store: %+v", keys)
	}
	if evs := must(ps.Read(ctx, "k", 0, 0))(t); len(evs) != 0 {
		t.Fatalf("events of a key never parked: %+v", evs)
	}
	check(t, ps.Remove(ctx, "k", 1))
	if n := must(ps.Clear(ctx, "k"))(t); n != 0 {
		t.Fatalf("clear of a key never parked: %d", n)
	}
}

func (s suite) parkAppendSeq(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	first := rawEvents("e1", "e2")
	check(t, ps.Append(ctx, "k", "boom", first))
	check(t, ps.Append(ctx, "k", "boom again", rawEvents("e3")))
	got := must(ps.Read(ctx, "k", 0, 0))(t)
	if names(got) != "e1 e2 e3" {
		t.Fatalf("read %q, want e1 e2 e3", names(got))
	}
	checkSeqs(t, got)
	for i, want := range first {
		ev := got[i]
		if !bytes.Equal(ev.Event.Data, want.Event.Data) || ev.Err != want.Err || ev.Attempts != want.Attempts || !ev.At.Equal(want.At) {
			t.Fatalf("event %d read back as %+v, want %+v", i, ev, want)
		}
	}
	keys := must(ps.Keys(ctx))(t)
	if len(keys) != 1 || keys[0].Key != "k" || keys[0].Reason != "boom again" || keys[0].Events != 3 {
		t.Fatalf("keys: %+v, want k with 3 events and the latest reason", keys)
	}
	if since := keys[0].Since; since.IsZero() || time.Since(since) > time.Hour || time.Until(since) > time.Hour {
		t.Fatalf("Since %v is not the time the key was parked", since)
	}
}

func (s suite) parkAppendWithoutEvents(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	check(t, ps.Append(ctx, "idle", "nothing", nil))
	if keys := must(ps.Keys(ctx))(t); len(keys) != 0 {
		t.Fatalf("an Append without events parked a key: %+v", keys)
	}
	check(t, ps.Append(ctx, "k", "first", rawEvents("e1")))
	check(t, ps.Append(ctx, "k", "second", nil))
	keys := must(ps.Keys(ctx))(t)
	if len(keys) != 1 || keys[0].Reason != "second" || keys[0].Events != 1 {
		t.Fatalf("keys: %+v, want k with reason second and 1 event", keys)
	}
}

func (s suite) parkKeysOldestFirst(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	for _, k := range []string{"m", "a", "z", "b"} {
		check(t, ps.Append(ctx, k, "r-"+k, rawEvents(k+"1")))
	}
	check(t, ps.Append(ctx, "m", "r-m", rawEvents("m2", "m3"))) // more events: no new park
	if got := keyList(must(ps.Keys(ctx))(t)); got != "m:3 a:1 z:1 b:1" {
		t.Fatalf("keys %q, want oldest park first: m:3 a:1 z:1 b:1", got)
	}
}

func (s suite) parkRemove(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	check(t, ps.Append(ctx, "k", "r", rawEvents("e1", "e2", "e3")))
	check(t, ps.Append(ctx, "other", "r", rawEvents("o1")))
	evs := must(ps.Read(ctx, "k", 0, 0))(t)
	check(t, ps.Remove(ctx, "k", evs[1].Seq))
	check(t, ps.Remove(ctx, "k", evs[1].Seq)) // again: not an error
	if got := names(must(ps.Read(ctx, "k", 0, 0))(t)); got != "e1 e3" {
		t.Fatalf("after removing e2: %q", got)
	}
	check(t, ps.Remove(ctx, "k", evs[0].Seq))
	check(t, ps.Remove(ctx, "k", evs[2].Seq))
	if got := keyList(must(ps.Keys(ctx))(t)); got != "other:1" {
		t.Fatalf("keys after emptying k: %q, want other:1", got)
	}
	if evs := must(ps.Read(ctx, "k", 0, 0))(t); len(evs) != 0 {
		t.Fatalf("an emptied park still reads %s", names(evs))
	}
	// A new park of k goes after other.
	check(t, ps.Append(ctx, "k", "again", rawEvents("e4")))
	if got := keyList(must(ps.Keys(ctx))(t)); got != "other:1 k:1" {
		t.Fatalf("keys %q, want other:1 k:1", got)
	}
	checkSeqs(t, must(ps.Read(ctx, "k", 0, 0))(t))
}

func (s suite) parkClear(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	check(t, ps.Append(ctx, "k", "r", rawEvents("e1", "e2")))
	check(t, ps.Append(ctx, "k", "r", rawEvents("e3")))
	if n := must(ps.Clear(ctx, "k"))(t); n != 3 {
		t.Fatalf("clear returned %d, want 3", n)
	}
	if keys := must(ps.Keys(ctx))(t); len(keys) != 0 {
		t.Fatalf("keys after clear: %+v", keys)
	}
	if n := must(ps.Clear(ctx, "k"))(t); n != 0 {
		t.Fatalf("second clear returned %d", n)
	}
	check(t, ps.Append(ctx, "k", "r", rawEvents("e4")))
	if got := names(must(ps.Read(ctx, "k", 0, 0))(t)); got != "e4" {
		t.Fatalf("a new park after clear reads %q", got)
	}
}

// parkReopen parks interleaved keys through one handle, closes it, and reads
// them through another: order, sizes and reasons survive.
func (s suite) parkReopen(t *testing.T) {
	ctx := ctxOf(t)
	ns := s.ns(t, "")
	first := s.h.Open(t)
	ps := first.Parks(ns)
	check(t, ps.Append(ctx, "b", "rb", rawEvents("b1", "b2")))
	check(t, ps.Append(ctx, "a", "ra", rawEvents("a1")))
	check(t, ps.Append(ctx, "b", "rb", rawEvents("b3")))
	check(t, ps.Append(ctx, "a", "ra", rawEvents("a2", "a3")))
	before := must(ps.Read(ctx, "b", 0, 0))(t)
	closeStore(t, first)

	again := s.open(t).Parks(ns)
	if got := keyList(must(again.Keys(ctx))(t)); got != "b:3 a:3" {
		t.Fatalf("keys after reopening: %q, want b:3 a:3", got)
	}
	if got := names(must(again.Read(ctx, "a", 0, 0))(t)); got != "a1 a2 a3" {
		t.Fatalf("a after reopening: %q", got)
	}
	after := must(again.Read(ctx, "b", 0, 0))(t)
	if names(after) != "b1 b2 b3" {
		t.Fatalf("b after reopening: %q", names(after))
	}
	for i := range after {
		if after[i].Seq != before[i].Seq {
			t.Fatalf("Seq of %s changed across reopening: %d, was %d", after[i].Event.Name, after[i].Seq, before[i].Seq)
		}
	}
	// The park goes on where it was: new events join its end.
	check(t, again.Append(ctx, "b", "rb", rawEvents("b4")))
	got := must(again.Read(ctx, "b", 0, 0))(t)
	if names(got) != "b1 b2 b3 b4" {
		t.Fatalf("b after appending: %q", names(got))
	}
	checkSeqs(t, got)
}

// parkConcurrent appends from many goroutines over two handles: to keys of
// their own and, for a few, to one shared key. Every event is kept; each
// appender's events stay in its order; Seq increase in read order.
func (s suite) parkConcurrent(t *testing.T) {
	ctx := ctxOf(t)
	ns := s.ns(t, "")
	a, b := s.open(t).Parks(ns), s.open(t).Parks(ns)
	const perAppender = 5
	var wg sync.WaitGroup
	errs := make([]error, s.h.Goroutines)
	for g := range errs {
		ps := a
		if g%2 == 1 {
			ps = b
		}
		wg.Go(func() {
			for i := range perAppender {
				own := fmt.Sprintf("g%d", g)
				if err := ps.Append(ctx, own, "r", rawEvents(fmt.Sprintf("%s-%d", own, i))); err != nil {
					errs[g] = err
					return
				}
				if err := ps.Append(ctx, "shared", "r", rawEvents(fmt.Sprintf("%s-%d", own, i))); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		check(t, err)
	}
	keys := must(a.Keys(ctx))(t)
	if len(keys) != s.h.Goroutines+1 {
		t.Fatalf("%d parked keys, want %d", len(keys), s.h.Goroutines+1)
	}
	shared := must(b.Read(ctx, "shared", 0, 0))(t)
	if len(shared) != s.h.Goroutines*perAppender {
		t.Fatalf("shared park holds %d events, want %d", len(shared), s.h.Goroutines*perAppender)
	}
	checkSeqs(t, shared)
	next := map[string]int{}
	for _, ev := range shared {
		var g, i int
		if _, err := fmt.Sscanf(ev.Event.Name, "g%d-%d", &g, &i); err != nil {
			t.Fatalf("unexpected event %q", ev.Event.Name)
		}
		own := fmt.Sprintf("g%d", g)
		if i != next[own] {
			t.Fatalf("appender %s: event %d read before %d", own, i, next[own])
		}
		next[own]++
	}
}

func (s suite) parkOddBytes(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	key := "ключ/with 'quotes' and \"more\"; DROP TABLE x; --"
	events := []runtime.ParkedEvent[durable.RawEvent]{
		{Event: durable.RawEvent{Name: "Binary", Data: []byte{0, 1, 2, 0xff, 0}}, Err: strings.Repeat("long reason ", 500)},
		{Event: durable.RawEvent{Name: "Empty"}},
	}
	check(t, ps.Append(ctx, key, "reason with\nnewline", events))
	got := must(ps.Read(ctx, key, 0, 0))(t)
	if len(got) != 2 || !bytes.Equal(got[0].Event.Data, events[0].Event.Data) || got[0].Err != events[0].Err || len(got[1].Event.Data) != 0 || got[1].Event.Name != "Empty" {
		t.Fatalf("odd events read back as %+v", got)
	}
	keys := must(ps.Keys(ctx))(t)
	if len(keys) != 1 || keys[0].Key != key || keys[0].Reason != "reason with\nnewline" {
		t.Fatalf("odd key read back as %+v", keys)
	}
}

// parkPaged reads a park a page at a time: at most limit events, each page
// after the Seq the previous one ended with, and nothing after the last.
func (s suite) parkPaged(t *testing.T) {
	ctx := ctxOf(t)
	ps := s.open(t).Parks(s.ns(t, ""))
	check(t, ps.Append(ctx, "k", "boom", rawEvents("e1", "e2", "e3", "e4", "e5")))
	var pages []string
	for after := uint64(0); ; {
		page := must(ps.Read(ctx, "k", after, 2))(t)
		if len(page) > 2 {
			t.Fatalf("a page of limit 2 held %d events", len(page))
		}
		if len(page) == 0 {
			break
		}
		pages = append(pages, names(page))
		after = page[len(page)-1].Seq
	}
	if got := strings.Join(pages, " | "); got != "e1 e2 | e3 e4 | e5" {
		t.Fatalf("pages %q, want e1 e2 | e3 e4 | e5", got)
	}
	all := must(ps.Read(ctx, "k", 0, 0))(t)
	check(t, ps.Remove(ctx, "k", all[1].Seq))
	if got := names(must(ps.Read(ctx, "k", all[0].Seq, 2))(t)); got != "e3 e4" {
		t.Fatalf("a page after a removed event: %q, want e3 e4", got)
	}
	whole := must(runtime.ReadPark(ctx, ps, "k"))(t)
	if names(whole) != "e1 e3 e4 e5" {
		t.Fatalf("ReadPark: %q", names(whole))
	}
}
