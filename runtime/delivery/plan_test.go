package delivery

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// ev is a test event: a key, its version and whether it is a snapshot.
type ev struct {
	key      string
	version  uint64
	snapshot bool
}

func evKey(e ev) string    { return e.key }
func evSnapshot(e ev) bool { return e.snapshot }
func noSnapshot(ev) bool   { return false }
func streamsOf(keys, n int) []ev {
	var out []ev
	for v := 1; v <= n; v++ {
		for k := range keys {
			out = append(out, ev{key: fmt.Sprintf("k%d", k), version: uint64(v)})
		}
	}
	return out
}

// guardSim applies a plan the way the generated version guard and the
// runtime's resequencer do: it returns the events applied per key, in
// order, and the most events any key held at once.
func guardSim(t interface{ Fatalf(string, ...any) }, plan []Sent[ev]) (map[string][]uint64, int) {
	stored := map[string]uint64{}
	held := map[string][]ev{}
	applied := map[string][]uint64{}
	most := 0
	offer := func(e ev) bool {
		switch s := stored[e.key]; {
		case e.version <= s:
			return false // skipped
		case e.version > s+1 && !e.snapshot:
			held[e.key] = append(held[e.key], e)
			return false
		}
		stored[e.key] = e.version
		applied[e.key] = append(applied[e.key], e.version)
		return true
	}
	for _, s := range plan {
		if !offer(s.Event) {
			most = max(most, len(held[s.Event.key]))
			continue
		}
		// Re-offer the held events after each applied one, in arrival order.
		for again := true; again; {
			again = false
			h := held[s.Event.key]
			held[s.Event.key] = nil
			for _, e := range h {
				if offer(e) {
					again = true
				}
			}
		}
		most = max(most, len(held[s.Event.key]))
	}
	for k, h := range held {
		if len(h) > 0 {
			t.Fatalf("key %s still holds %v at the end", k, h)
		}
	}
	return applied, most
}

func TestPlanZeroChaosIsPublicationOrder(t *testing.T) {
	events := streamsOf(3, 4)
	plan, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: 8}, Chaos{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != len(events) {
		t.Fatalf("%d deliveries of %d events", len(plan), len(events))
	}
	last := map[string]uint64{}
	for _, s := range plan {
		if s.Kind != First || s.Late || s.Event != events[s.Index] {
			t.Fatalf("unexpected delivery %+v", s)
		}
		if s.Event.version != last[s.Event.key]+1 {
			t.Fatalf("key %s: version %d after %d", s.Event.key, s.Event.version, last[s.Event.key])
		}
		last[s.Event.key] = s.Event.version
	}
}

// TestPlanStaysRepairable checks, for random chaos, that the guards turn
// every plan back into publication order without ever holding more than
// MaxHeld events, and that the plan has the chaos it was asked for.
func TestPlanStaysRepairable(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		keys := rapid.IntRange(1, 4).Draw(rt, "keys")
		n := rapid.IntRange(1, 40).Draw(rt, "events")
		maxHeld := rapid.IntRange(1, 10).Draw(rt, "maxHeld")
		c := Chaos{
			Seed:         rapid.Int().Draw(rt, "seed"),
			Duplicates:   rapid.Float64Range(0, 1).Draw(rt, "duplicates"),
			Redeliveries: rapid.Float64Range(0, 1).Draw(rt, "redeliveries"),
			Reorder:      rapid.IntRange(0, maxHeld).Draw(rt, "reorder"),
			Gaps:         rapid.Float64Range(0, 0.5).Draw(rt, "gaps"),
		}
		events := streamsOf(keys, n)
		plan, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: maxHeld}, c)
		if err != nil {
			rt.Fatal(err)
		}
		firsts := make([]int, len(events))
		for _, s := range plan {
			if s.Event != events[s.Index] {
				rt.Fatalf("delivery %+v does not carry event %d", s, s.Index)
			}
			if s.Kind == First {
				firsts[s.Index]++
			}
		}
		for i, f := range firsts {
			if f != 1 {
				rt.Fatalf("event %d delivered first %d times", i, f)
			}
		}
		applied, most := guardSim(rt, plan)
		if most > maxHeld {
			rt.Fatalf("a key held %d events, more than MaxHeld %d (%v)", most, maxHeld, c)
		}
		for k := range keys {
			got := applied[fmt.Sprintf("k%d", k)]
			if len(got) != n {
				rt.Fatalf("key k%d: applied %v, want 1..%d", k, got, n)
			}
			for i, v := range got {
				if v != uint64(i+1) {
					rt.Fatalf("key k%d: applied %v, want 1..%d", k, got, n)
				}
			}
		}
		again, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: maxHeld}, c)
		if err != nil || !reflect.DeepEqual(plan, again) {
			rt.Fatalf("the same seed gave another plan (%v)", err)
		}
	})
}

func TestPlanHasTheChaosAskedFor(t *testing.T) {
	events := streamsOf(5, 40)
	c := Chaos{Seed: 1, Duplicates: 0.2, Redeliveries: 0.1, Reorder: 3, Gaps: 0.05}
	plan, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: 16}, c)
	if err != nil {
		t.Fatal(err)
	}
	r := Report[ev]{Sent: plan}
	dup, re, late := r.Count(Duplicate), r.Count(Redelivery), r.Late()
	// 200 events: about 40 duplicates, 20 redeliveries and many late ones.
	if dup < 20 || dup > 60 || re < 8 || re > 35 || late < 20 {
		t.Errorf("duplicates %d, redeliveries %d, late %d: not what %v asks for", dup, re, late, c)
	}
	if r.Count(First) != len(events) {
		t.Errorf("%d first deliveries of %d events", r.Count(First), len(events))
	}
	other, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: 16}, Chaos{Seed: 2, Duplicates: 0.2, Redeliveries: 0.1, Reorder: 3, Gaps: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(plan, other) {
		t.Error("seeds 1 and 2 gave the same plan")
	}
}

func TestPlanGapsReachTheBound(t *testing.T) {
	events := streamsOf(1, 30)
	plan, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: 5}, Chaos{Seed: 3, Gaps: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if _, most := guardSim(t, plan); most != 5 {
		t.Errorf("gaps held at most %d events, want the bound 5", most)
	}
}

func TestPlanSnapshotCrossesGap(t *testing.T) {
	// A snapshot delivered early is applied across the gap: what it
	// supersedes is stale, and copies of superseded events are not held.
	events := []ev{{"a", 1, true}, {"a", 2, false}, {"a", 3, false}, {"a", 4, true}, {"a", 5, false}}
	for seed := range 200 {
		plan, err := Plan(events, evKey, evSnapshot, Guard{Versioned: true, MaxHeld: 4}, Chaos{Seed: seed, Duplicates: 0.5, Redeliveries: 0.5, Reorder: 4})
		if err != nil {
			t.Fatal(err)
		}
		applied, most := guardSim(t, plan)
		if most > 4 {
			t.Fatalf("seed %d: held %d", seed, most)
		}
		got := applied["a"]
		if got[len(got)-1] != 5 {
			t.Fatalf("seed %d: applied %v, not ending at version 5", seed, got)
		}
	}
}

func TestPlanUnversioned(t *testing.T) {
	events := streamsOf(2, 10)
	plan, err := Plan(events, evKey, nil, Guard{}, Chaos{Seed: 4, Duplicates: 0.5, Redeliveries: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	newest := map[string]int{}
	for _, s := range plan {
		if s.Kind == First {
			if s.Index < newest[s.Event.key] {
				t.Fatalf("an unversioned entity's event %d was reordered", s.Index)
			}
			newest[s.Event.key] = s.Index
		}
	}
	if (Report[ev]{Sent: plan}).Count(Duplicate) == 0 {
		t.Error("no duplicates")
	}
}

func TestPlanRefusesWhatGuardsCannotRepair(t *testing.T) {
	events := streamsOf(1, 3)
	for _, tc := range []struct {
		g            Guard
		c            Chaos
		unrepairable bool
	}{
		{Guard{}, Chaos{Reorder: 1}, true},
		{Guard{}, Chaos{Gaps: 0.1}, true},
		{Guard{Versioned: true, MaxHeld: 2}, Chaos{Reorder: 3}, true},
		{Guard{Versioned: true}, Chaos{Gaps: 0.1}, true},
		{Guard{Versioned: true, MaxHeld: 2}, Chaos{Reorder: -1}, false},
		{Guard{Versioned: true, MaxHeld: 2}, Chaos{Duplicates: 1.5}, false},
		{Guard{Versioned: true, MaxHeld: 2}, Chaos{Redeliveries: -0.1}, false},
		{Guard{Versioned: true, MaxHeld: 2}, Chaos{Gaps: math.NaN()}, false},
	} {
		_, err := Plan(events, evKey, nil, tc.g, tc.c)
		if err == nil || errors.Is(err, ErrUnrepairable) != tc.unrepairable {
			t.Errorf("%+v %v: error %v, want one (unrepairable: %v)", tc.g, tc.c, err, tc.unrepairable)
		}
	}
	if _, err := Plan(events, evKey, nil, Guard{Versioned: true, MaxHeld: 2}, Chaos{Reorder: 2, Gaps: 1}); err != nil {
		t.Errorf("reorder up to MaxHeld: %v", err)
	}
	// Notifications: order does not matter, any reordering goes; gaps do
	// not (nothing holds an unversioned event).
	plan, err := Plan(streamsOf(1, 20), evKey, nil, Guard{Unordered: true}, Chaos{Seed: 5, Reorder: 10})
	if err != nil || (Report[ev]{Sent: plan}).Late() == 0 {
		t.Errorf("reordering notifications: %v, %d late", err, (Report[ev]{Sent: plan}).Late())
	}
	if _, err := Plan(events, evKey, nil, Guard{Unordered: true}, Chaos{Gaps: 0.5}); !errors.Is(err, ErrUnrepairable) {
		t.Errorf("gaps in notifications: %v, want ErrUnrepairable", err)
	}
}

// TestPlanLosesEventsOnlyWhereAResyncFollows checks, for random chaos with
// losses, that every lost event has more than MaxHeld kept events of its
// key after it (the count bound is hit, and the key resyncs), that the rest
// of the plan is the chaos asked for, and that a guard that resyncs to the
// key's last version once its bound is hit ends every key at that version
// with nothing held.
func TestPlanLosesEventsOnlyWhereAResyncFollows(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		keys := rapid.IntRange(1, 3).Draw(rt, "keys")
		n := rapid.IntRange(1, 40).Draw(rt, "events")
		maxHeld := rapid.IntRange(1, 6).Draw(rt, "maxHeld")
		c := Chaos{
			Seed:         rapid.Int().Draw(rt, "seed"),
			Duplicates:   rapid.Float64Range(0, 0.5).Draw(rt, "duplicates"),
			Redeliveries: rapid.Float64Range(0, 0.5).Draw(rt, "redeliveries"),
			Reorder:      rapid.IntRange(0, maxHeld).Draw(rt, "reorder"),
			Losses:       rapid.Float64Range(0, 0.5).Draw(rt, "losses"),
		}
		events := streamsOf(keys, n)
		plan, err := Plan(events, evKey, noSnapshot, Guard{Versioned: true, MaxHeld: maxHeld, Resyncs: true}, c)
		if err != nil {
			rt.Fatal(err)
		}
		lost := map[string][]uint64{}
		seen := make([]int, len(events))
		for _, s := range plan {
			if s.Kind == Lost || s.Kind == First {
				seen[s.Index]++
			}
			if s.Kind == Lost {
				lost[s.Event.key] = append(lost[s.Event.key], s.Event.version)
			}
		}
		for i, k := range seen {
			if k != 1 {
				rt.Fatalf("event %d delivered or lost %d times", i, k)
			}
		}
		for key, versions := range lost {
			for _, v := range versions {
				kept := 0 // later versions of the key not lost
				for w := v + 1; w <= uint64(n); w++ {
					if !slices.Contains(versions, w) {
						kept++
					}
				}
				if kept <= maxHeld {
					rt.Fatalf("key %s: version %d lost with only %d kept events after it (MaxHeld %d)", key, v, kept, maxHeld)
				}
			}
		}
		// The guards, resyncing to the key's last version when a key holds
		// more than MaxHeld events.
		stored := map[string]uint64{}
		held := map[string]int{}
		for _, s := range plan {
			if s.Kind == Lost {
				continue
			}
			k, v := s.Event.key, s.Event.version
			switch {
			case v <= stored[k]:
			case v == stored[k]+1 && held[k] == 0:
				stored[k] = v
			default:
				// Held (or applied with held ones re-offered: the exact
				// resequencing is TestPlanStaysRepairable's).
				held[k]++
				if held[k] > maxHeld {
					stored[k], held[k] = uint64(n), 0 // resynced to the last version
				}
			}
		}
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			if len(lost[key]) > 0 && stored[key] != uint64(n) {
				rt.Fatalf("key %s lost %v and ended at version %d, not resynced", key, lost[key], stored[key])
			}
		}
	})
	events := streamsOf(1, 3)
	if _, err := Plan(events, evKey, nil, Guard{Versioned: true, MaxHeld: 2}, Chaos{Losses: 0.1}); !errors.Is(err, ErrUnrepairable) {
		t.Errorf("losses without a resync: %v, want ErrUnrepairable", err)
	}
	if _, err := Plan(events, evKey, nil, Guard{Versioned: true, MaxHeld: 2, Resyncs: true}, Chaos{Losses: 2}); err == nil || errors.Is(err, ErrUnrepairable) {
		t.Errorf("Losses 2: %v, want a range error", err)
	}
}
