package delivery

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// ErrUnrepairable is returned by Plan for a Chaos that the entity's guards
// cannot repair: a reordering or a gap on an entity without a version, a
// reordering beyond the resequencer's bound, or a lost event for an entity
// that does not resync.
var ErrUnrepairable = errors.New("chaos the guards cannot repair")

// Chaos says how a delivery departs from publication order. The zero Chaos
// delivers every event once, in publication order.
type Chaos struct {
	// Seed draws the plan: the same events, Guard and Chaos give the same
	// plan. It is an int, so that a test's loop variable is a seed as it
	// is (for seed := range 20); any value is valid.
	Seed int
	// Duplicates is the probability (0 to 1) that an event is delivered
	// twice, as a transport that retries a send delivers it. The copy
	// follows the original at once, or, when the original is held back on a
	// version gap, right after the gap fills.
	Duplicates float64
	// Redeliveries is the probability (0 to 1) that, after an event, a
	// stale copy of an earlier event of its key that was already applied is
	// delivered again, as a consumer that restarts from an older offset
	// delivers it.
	Redeliveries float64
	// Reorder is the most later events of its key that may overtake an
	// event (0: none). It must not exceed the resequencer's bound
	// (Guard.MaxHeld); entities without a version refuse it.
	Reorder int
	// Gaps is the probability (0 to 1) that an event goes missing for a
	// while: it arrives only after the next Guard.MaxHeld events of its key
	// (or after the key's last one), so the resequencer holds as many events
	// as it can, then the gap fills. Entities without a version refuse it.
	Gaps float64
	// Losses is the probability (0 to 1) that an event is lost: it is
	// never delivered, as a producer that failed after its commit loses
	// it. Its key's later events wait for it until the resequencer's bound
	// is hit and the key is resynced from the source of truth, so only an
	// entity that resyncs (Guard.Resyncs) takes it. An event is lost only
	// when more than Guard.MaxHeld events of its key that are not lost
	// follow it, so that the count bound is hit before the key's events
	// run out (the time bound would take MaxHold).
	Losses float64
}

// String returns the Chaos as Go syntax, for test failure messages.
func (c Chaos) String() string {
	return fmt.Sprintf("Chaos{Seed: %d, Duplicates: %g, Redeliveries: %g, Reorder: %d, Gaps: %g, Losses: %g}", c.Seed, c.Duplicates, c.Redeliveries, c.Reorder, c.Gaps, c.Losses)
}

// Guard says what the guards of an entity repair.
type Guard struct {
	// Versioned reports whether the entity has a version: its guard skips
	// duplicates and stale events and its resequencer holds early ones.
	Versioned bool
	// MaxHeld is the resequencer's bound: the most events of one key held
	// back on a version gap.
	MaxHeld int
	// Resyncs reports whether a key whose bound is hit is resynced from
	// the source of truth (on_gap: resync) rather than parked: a lost
	// event does not stop it.
	Resyncs bool
	// Unordered reports that the order of a key's events does not matter
	// (notifications, which the handler answers by fetching the key's
	// state): an entity without a version then takes reorderings.
	Unordered bool
}

// Kind tells why an event was delivered.
type Kind uint8

const (
	// First is an event's first delivery.
	First Kind = iota + 1
	// Duplicate is a second delivery of an event (Chaos.Duplicates).
	Duplicate
	// Redelivery is a stale copy of an event already applied
	// (Chaos.Redeliveries).
	Redelivery
	// Lost is an event that is never delivered (Chaos.Losses): Run does
	// not publish it.
	Lost
)

// String returns "first", "duplicate" or "redelivery".
func (k Kind) String() string {
	switch k {
	case First:
		return "first"
	case Duplicate:
		return "duplicate"
	case Redelivery:
		return "redelivery"
	case Lost:
		return "lost"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Sent is one delivery of a plan (or, of Kind Lost, one that never
// happens).
type Sent[E any] struct {
	// Event is the event delivered.
	Event E
	// Index is the event's position in the publication order given to
	// Plan.
	Index int
	// Kind tells why it was delivered.
	Kind Kind
	// Late reports a first delivery that later events of its key
	// overtook (a reordering or a gap).
	Late bool
}

// Plan returns the deliveries of events (in publication order) that c
// describes, for an entity whose guards g describes. key returns an
// event's key; snapshot reports whether an event carries its entity's full
// state (the version guard applies it across a gap); nil means none does.
// It returns an error wrapping ErrUnrepairable for a Chaos the guards
// cannot repair, and an error for values out of range.
func Plan[K comparable, E any](events []E, key func(E) K, snapshot func(E) bool, g Guard, c Chaos) ([]Sent[E], error) {
	if err := check(g, c); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x6f72646572676e))
	var (
		streams [][]int
		index   = make(map[K]int)
	)
	for i, e := range events {
		k := key(e)
		s, ok := index[k]
		if !ok {
			s = len(streams)
			index[k] = s
			streams = append(streams, nil)
		}
		streams[s] = append(streams[s], i)
	}
	isSnapshot := func(i int) bool { return snapshot != nil && snapshot(events[i]) }
	plans := make([][]Sent[E], len(streams))
	for s, stream := range streams {
		plans[s] = planKey(rng, events, stream, isSnapshot, g, c)
	}
	return interleave(rng, plans), nil
}

func check(g Guard, c Chaos) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"Duplicates", c.Duplicates}, {"Redeliveries", c.Redeliveries}, {"Gaps", c.Gaps}, {"Losses", c.Losses}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v > 1 {
			return fmt.Errorf("chaos: %s is %g, not a probability from 0 to 1", p.name, p.v)
		}
	}
	switch {
	case c.Reorder < 0:
		return fmt.Errorf("chaos: Reorder is %d, below 0", c.Reorder)
	case !g.Versioned && c.Gaps > 0, !g.Versioned && !g.Unordered && c.Reorder > 0:
		return fmt.Errorf("%w: the entity has no version, so nothing puts reordered events back in order: use Reorder: 0 and Gaps: 0", ErrUnrepairable)
	case g.Versioned && c.Reorder > g.MaxHeld:
		return fmt.Errorf("%w: Reorder %d exceeds the resequencer's bound MaxHeld %d: the key would be parked", ErrUnrepairable, c.Reorder, g.MaxHeld)
	case c.Gaps > 0 && g.MaxHeld < 1:
		return fmt.Errorf("%w: Gaps needs a resequencer that holds events, and MaxHeld is %d", ErrUnrepairable, g.MaxHeld)
	case c.Losses > 0 && (!g.Versioned || !g.Resyncs):
		return fmt.Errorf("%w: a lost event parks its key unless the entity resyncs from the source of truth (on_gap: resync): use Losses: 0", ErrUnrepairable)
	}
	return nil
}

// planKey plans the deliveries of one key's events (stream holds their
// indices in publication order).
//
// Each event i gets a delay r(i): up to Reorder, or MaxHeld for a gap, and
// the events go out sorted by i+r(i), a later event first on a tie. An
// event j > i overtakes i only if j-i <= r(i), so at most r(i) <= MaxHeld
// events are ever delivered ahead of the oldest missing one: the
// resequencer never holds more. Copies (duplicates and redeliveries) are
// delivered only once their original was applied or superseded, so the
// version guard skips them and they are never held.
func planKey[E any](rng *rand.Rand, events []E, stream []int, snapshot func(int) bool, g Guard, c Chaos) []Sent[E] {
	n := len(stream)
	// Losses first, from the end: an event may be lost only when more than
	// MaxHeld kept events of its key follow it.
	lost := make([]bool, n)
	if c.Losses > 0 {
		kept := 0
		for p := n - 1; p >= 0; p-- {
			if kept > g.MaxHeld && rng.Float64() < c.Losses {
				lost[p] = true
				continue
			}
			kept++
		}
	}
	prio := make([]int, n)
	for p := range stream {
		delay := 0
		if c.Gaps > 0 && rng.Float64() < c.Gaps {
			delay = g.MaxHeld
		} else if c.Reorder > 0 {
			delay = rng.IntN(c.Reorder + 1)
		}
		prio[p] = p + delay
	}
	order := make([]int, n) // positions in stream, in delivery order
	for p := range order {
		order[p] = p
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if prio[a] != prio[b] {
			return prio[a] - prio[b]
		}
		return b - a
	})

	out := make([]Sent[E], 0, n)
	delivered := make([]bool, n)
	next := 0    // the oldest position neither applied nor superseded
	newest := -1 // the latest position delivered so far
	var deferred []int
	send := func(p int, k Kind, late bool) {
		out = append(out, Sent[E]{Event: events[stream[p]], Index: stream[p], Kind: k, Late: late})
	}
	for _, p := range order {
		if lost[p] {
			// Never delivered: the key's later events wait for it, then the
			// key resyncs; copies of what comes after it are never sent,
			// since the plan cannot tell what the resync covers.
			out = append(out, Sent[E]{Event: events[stream[p]], Index: stream[p], Kind: Lost})
			continue
		}
		send(p, First, p < newest)
		newest = max(newest, p)
		delivered[p] = true
		if g.Versioned && p > next && snapshot(stream[p]) {
			next = p + 1 // applied across the gap: what it skips is stale
		}
		for next < n && delivered[next] {
			next++
		}
		if c.Duplicates > 0 && rng.Float64() < c.Duplicates {
			deferred = append(deferred, p)
		}
		kept := deferred[:0]
		for _, d := range deferred {
			if d < next {
				send(d, Duplicate, false)
			} else {
				kept = append(kept, d)
			}
		}
		deferred = kept
		if c.Redeliveries > 0 && next > 0 && rng.Float64() < c.Redeliveries {
			send(rng.IntN(next), Redelivery, false)
		}
	}
	return out
}

// interleave merges the plans of the keys at random, keeping each key's
// order: every interleaving is equally likely.
func interleave[E any](rng *rand.Rand, plans [][]Sent[E]) []Sent[E] {
	total := 0
	for _, p := range plans {
		total += len(p)
	}
	out := make([]Sent[E], 0, total)
	for left := total; left > 0; left-- {
		pick := rng.IntN(left)
		for i, p := range plans {
			if pick < len(p) {
				out = append(out, p[0])
				plans[i] = p[1:]
				break
			}
			pick -= len(p)
		}
	}
	return out
}
