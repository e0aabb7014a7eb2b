package outbox_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// sessions is what TestStress knows of the relays' database sessions and
// those the server ended; stress.mu guards it.
type sessions struct {
	seq    uint64               // numbers the claims, the sends' beginnings and the endings
	names  map[int64]string     // the running relays' application names (PostgreSQL)
	ended  map[int64]*ending    // the relays whose sessions the server ended
	claims map[[2]uint64]uint64 // (relay, round) -> the seq of its claim
	late   map[lateSend]int     // sends begun after the session of their round's claim was gone
}

// ending is when the server ended a relay's sessions: the seq before it
// listed them, and the seq once they were all gone (0 until then).
type ending struct{ from, to uint64 }

type lateSend struct {
	relay int64
	round uint64
	key   string
}

func newSessions() sessions {
	return sessions{names: map[int64]string{}, ended: map[int64]*ending{}, claims: map[[2]uint64]uint64{}, late: map[lateSend]int{}}
}

// live notes that relay inst runs with sessions named name, or, with "",
// that it stopped.
func (h *stress) live(inst int64, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if name == "" {
		delete(h.names, inst)
		return
	}
	h.names[inst] = name
}

// claimed notes that round of relay inst claimed events.
func (h *stress) claimed(inst int64, round uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.claims[[2]uint64{uint64(inst), round}] = h.seq
}

// lostRound reports whether round of relay inst held a claim when the
// server ended the relay's sessions (it claimed before): with h.mu held.
func (h *stress) lostRound(inst int64, round uint64) bool {
	e, ok := h.ended[inst]
	if !ok {
		return false
	}
	claim, ok := h.claims[[2]uint64{uint64(inst), round}]
	return ok && claim < e.from
}

// unended counts the relays in insts whose sessions the server did not
// end: with h.mu held.
func (h *stress) unended(insts []int64) int {
	n := 0
	for _, inst := range insts {
		if _, ok := h.ended[inst]; !ok {
			n++
		}
	}
	return n
}

// sendBegins notes that relay inst begins a send of key in round, and
// fails the test when a round whose claim's session the server ended
// begins a second send of a key once it was gone: with h.mu held.
func (h *stress) sendBegins(inst int64, round uint64, key string) {
	h.seq++
	e, ok := h.ended[inst]
	if !ok || e.to == 0 || !h.lostRound(inst, round) {
		return
	}
	at := lateSend{relay: inst, round: round, key: key}
	h.late[at]++
	h.totals.lateSends++
	if n := h.late[at]; n > 1 {
		h.errs = append(h.errs, fmt.Errorf("relay %d round %d began send %d of key %s after the server had ended the session of its claim", inst, round, n, key))
	}
}

// endSessions ends the sessions of a running relay, chosen at random, as
// an operator's pg_terminate_backend would (once per relay).
func (h *stress) endSessions() {
	h.mu.Lock()
	running := slices.Sorted(maps.Keys(h.names))
	h.mu.Unlock()
	if len(running) > 0 {
		h.endSessionsOf(running[h.intn(len(running))])
	}
}

// endSessionsOf ends the sessions of relay inst, unless it stopped or they
// were ended before.
func (h *stress) endSessionsOf(inst int64) {
	h.mu.Lock()
	name, running := h.names[inst]
	if _, ok := h.ended[inst]; ok || !running {
		h.mu.Unlock()
		return
	}
	h.seq++
	e := &ending{from: h.seq}
	h.ended[inst] = e
	for id := range h.claims {
		if _, over := h.rounds[id]; id[0] == uint64(inst) && !over {
			h.totals.killedRounds++
		}
	}
	h.mu.Unlock()
	if _, err := terminate(context.Background(), h.writer, name); err != nil {
		h.fail(fmt.Errorf("end the sessions of relay %d: %w", inst, err))
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.to = h.seq
	h.totals.kills++
}
