package genimpl

import (
	"slices"

	"github.com/ordergen/ordergen/runtime"
)

// The state guard's rules. Ranked states only move forward: a move to a
// state ranked below the current one is late. A move to the current state
// applies when the entity has a version (the version guard told a newer
// event from a duplicate already) and is skipped as a duplicate when it
// has none (a second event to the state cannot be told from a copy). A
// branch state is entered only from the states it lists, and no ranked
// state follows it. An event with in: applies only within the states it
// lists.

// notAState is rank's answer for a name that is no state of the entity.
const notAState = -2

// rank returns the rank of state: 1 for the first ranked state, 0 for none
// yet, -1 for a branch state and notAState for a name that is not a state.
func (en *Entity[K, E, B]) rank(state string) int {
	if state == "" {
		return 0
	}
	if i := slices.Index(en.States, state); i >= 0 {
		return i + 1
	}
	for _, b := range en.Branches {
		if b.Name == state {
			return -1
		}
	}
	return notAState
}

// duplicateReason starts the reason of a move to the current state of an
// entity without a version.
const duplicateReason = "duplicate: already in state "

// transition returns why the entity in state current must not move to
// target, or "" when it may.
func (en *Entity[K, E, B]) transition(current, target string) string {
	for _, b := range en.Branches {
		if b.Name != target {
			continue
		}
		switch {
		case slices.Contains(b.From, current), en.versioned() && current == b.Name:
			return ""
		case current == b.Name:
			return duplicateReason + b.Name
		}
		return "state " + b.Name + " may be entered only from " + list(b.From, "or")
	}
	from, to := en.rank(current), en.rank(target)
	switch {
	case from == -1:
		return "late transition: no ranked state follows branch state " + current
	case from < to, from == to && en.versioned():
		return ""
	case from == to:
		return duplicateReason + target
	}
	return "late transition: state " + target + " ranks below " + current
}

// within returns why the entity in state current must not take an event of
// rule r, which happens only within the states it lists, or "" when it may.
func (en *Entity[K, E, B]) within(current string, r *EventRule[E]) string {
	switch {
	case slices.Contains(r.In, current):
		return ""
	case current == "":
		return r.Name + " applies only in " + list(r.In, "or") + ", and the " + en.Name + " has no state yet"
	}
	return r.Name + " applies only in " + list(r.In, "or") + ", not in " + current
}

// stateReason returns why the state guard skips an event of rule r in
// state current, "" when it lets it through (and for an event that neither
// moves the entity nor happens within states), and a failure for a stored
// state that is no state of the entity.
func (en *Entity[K, E, B]) stateReason(key K, current string, r *EventRule[E]) (string, error) {
	if r.To == "" && len(r.In) == 0 {
		return "", nil
	}
	if en.rank(current) == notAState {
		return "", runtime.Permanent(en.errorf(key, "stored state %q is not a state of %s", current, en.Name))
	}
	if r.To != "" {
		return en.transition(current, r.To), nil
	}
	return en.within(current, r), nil
}
