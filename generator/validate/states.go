package validate

import (
	"slices"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// states checks the ranked states and the branches of e.
func (v *validator) states(e *schema.Entity, out *ir.Entity) {
	seen := make(map[string]diag.Pos)
	for _, s := range e.States {
		if !v.checkExported(s.Value, s.Pos, "state") {
			continue
		}
		if first, dup := seen[s.Value]; dup {
			v.errs.Add(s.Pos, "duplicate state %s (first at line %d)", s.Value, first.Line)
			continue
		}
		seen[s.Value] = s.Pos
		out.States = append(out.States, s.Value)
		setStateDoc(out, s.Value, e.StateDocs[s.Value])
	}
	if len(e.Branches) > 0 && len(e.States) == 0 && !statesUnknown(e) {
		v.errs.Add(e.Branches[0].Name.Pos, "branches need states: entity %s declares no ranked states to branch from", e.Name.Value)
	}
	branches := make(map[string]bool)
	for _, b := range e.Branches {
		if first, dup := seen[b.Name.Value]; dup {
			v.errs.Add(b.Name.Pos, "branch %s is also declared as a ranked state (line %d)", b.Name.Value, first.Line)
			continue
		}
		if v.checkExported(b.Name.Value, b.Name.Pos, "branch state") {
			branches[b.Name.Value] = true
		}
	}
	for _, b := range e.Branches {
		if !branches[b.Name.Value] {
			continue
		}
		br := ir.Branch{Name: b.Name.Value}
		setStateDoc(out, b.Name.Value, b.Doc)
		if len(b.From) == 0 && !b.Misspelt.Has("from") {
			v.errs.Add(b.FromPos, "branch %s needs from: a non-empty list of the states it may be entered from", b.Name.Value)
		}
		from := make(map[string]bool)
		for _, f := range b.From {
			switch _, isState := seen[f.Value]; {
			case f.Value == b.Name.Value:
				v.errs.Add(f.Pos, "branch %s cannot be entered from itself", b.Name.Value)
			case !isState && !branches[f.Value] && (statesUnknown(e) || slices.Contains(declaredStates(e), f.Value)):
				// A consequence of an error reported already: states: is
				// misspelt or not a list, or the state's name is invalid.
			case !isState && !branches[f.Value]:
				v.errs.Add(f.Pos, "branch %s: from names %q, which is not a state of entity %s%s", b.Name.Value, f.Value, e.Name.Value, diag.Suggest(f.Value, declaredStates(e)))
			case from[f.Value]:
				v.errs.Add(f.Pos, "branch %s: state %s is listed twice in from", b.Name.Value, f.Value)
			default:
				from[f.Value] = true
				br.From = append(br.From, f.Value)
			}
		}
		out.Branches = append(out.Branches, br)
	}
}

// setStateDoc records the doc of state, when it has one.
func setStateDoc(out *ir.Entity, state string, doc *schema.Scalar) {
	if d := docText(doc); d != "" {
		if out.StateDocs == nil {
			out.StateDocs = make(map[string]string)
		}
		out.StateDocs[state] = d
	}
}

// statesUnknown reports whether e's states cannot be known because of an
// error reported already: states: misspelt, or not a list. What would
// follow from their absence is not reported again.
func statesUnknown(e *schema.Entity) bool {
	return e.StatesBad || e.Misspelt.Has("states")
}

// toWithoutStates reports, once, that events of e move to states that e
// does not declare: at the first such event, with how many more there are.
func (v *validator) toWithoutStates(e *schema.Entity) {
	if len(e.States) > 0 || len(e.Branches) > 0 || statesUnknown(e) {
		return
	}
	var tos []*schema.Scalar
	for _, ev := range e.Events {
		if ev.To != nil {
			tos = append(tos, ev.To)
		}
	}
	switch len(tos) {
	case 0:
	case 1:
		v.errs.Add(tos[0].Pos, "to: needs states: entity %s declares none (add states: [...])", e.Name.Value)
	default:
		v.errs.Add(tos[0].Pos, "to: needs states: entity %s declares none (add states: [...]); %d more of its events have to:", e.Name.Value, len(tos)-1)
	}
}

// declaredStates returns the names of the ranked and branch states e
// declares.
func declaredStates(e *schema.Entity) []string {
	var names []string
	for _, s := range e.States {
		names = append(names, s.Value)
	}
	for _, b := range e.Branches {
		names = append(names, b.Name.Value)
	}
	return names
}
