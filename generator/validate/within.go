package validate

import (
	"slices"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// within checks the in: of e's events, the states within which an event
// happens without moving the entity, and sets them on out's events (which
// follow e's, one for one). An event either moves the entity (to:) or
// happens within states (in:), never both; an in: that names no state an
// event moves the entity to would skip its event always, unless the key's
// state can come from a resync.
func (v *validator) within(e *schema.Entity, out *ir.Entity) {
	if len(out.Events) != len(e.Events) {
		return
	}
	for i, ev := range e.Events {
		if ev.InPos.Line == 0 {
			continue
		}
		name := ev.Name.Value
		switch {
		case ev.To != nil:
			v.errs.Add(ev.InPos, "event %s has both to: and in: (to: moves entity %s to a state, in: applies the event only within states, without moving it): keep one", name, e.Name.Value)
			continue
		case len(e.States) == 0 && len(e.Branches) == 0:
			if !statesUnknown(e) {
				v.errs.Add(ev.InPos, "in: needs states: entity %s declares none (add states: [...])", e.Name.Value)
			}
			continue
		case ev.InBad:
			continue // reported by the loader
		case len(ev.In) == 0:
			v.errs.Add(ev.InPos, "in: of event %s lists no state: name the states within which it applies (in: [%s])", name, firstState(e))
			continue
		}
		var states []string
		for _, s := range ev.In {
			_, isBranch := out.IsBranch(s.Value)
			switch {
			case out.Rank(s.Value) == 0 && !isBranch && (statesUnknown(e) || slices.Contains(declaredStates(e), s.Value)):
				// A consequence of an error reported already: states: is
				// misspelt or not a list, or the state's name is invalid.
			case out.Rank(s.Value) == 0 && !isBranch:
				v.errs.Add(s.Pos, "in: %q is not a state of entity %s%s", s.Value, e.Name.Value, diag.Suggest(s.Value, out.StateNames()))
			case slices.Contains(states, s.Value):
				v.errs.Add(s.Pos, "in: of event %s lists state %s twice", name, s.Value)
			default:
				states = append(states, s.Value)
			}
		}
		out.Events[i].In = states
	}
	v.reachable(e, out)
}

// reachable reports an event whose in: names only states that no event
// moves the entity to: the state guard would skip it always. An entity
// that resyncs may reach any state from its source of truth, and a to:
// already reported leaves the states reached unknown: neither is checked.
func (v *validator) reachable(e *schema.Entity, out *ir.Entity) {
	if out.Resync {
		return
	}
	entered := map[string]bool{}
	for i, ev := range out.Events {
		if e.Events[i].To != nil && ev.To == "" {
			return
		}
		entered[ev.To] = true
	}
	for i, ev := range out.Events {
		if len(ev.In) == 0 || len(ev.In) != len(e.Events[i].In) {
			continue
		}
		if !slices.ContainsFunc(ev.In, func(s string) bool { return entered[s] }) {
			v.errs.Add(e.Events[i].InPos, "event %s applies only in %s, and no event moves entity %s there (to:): the state guard would skip it always", ev.Name, oneOf(ev.In), out.Name)
		}
	}
}

// firstState returns the name of e's first declared state, for an example.
func firstState(e *schema.Entity) string {
	if names := declaredStates(e); len(names) > 0 {
		return names[0]
	}
	return "State"
}
