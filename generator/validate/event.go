package validate

import (
	"slices"
	"strings"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// event checks one event of e and returns it.
func (v *validator) event(e *schema.Entity, ent *ir.Entity, ev *schema.Event, rule func(string) string) *ir.Event {
	out := ir.NewEvent(ev.Name.Value)
	out.Doc = docText(ev.Doc)
	v.checkExported(ev.Name.Value, ev.Name.Pos, "event name")

	// The members of the event's struct: methods, key, version, fields.
	members := v.newScope()
	methods := []string{"EventName", "EventKey"}
	if e.Version != nil {
		methods = append(methods, "EventVersion")
	}
	for _, m := range methods {
		members.declare(m, e.Name.Pos, "the generated method "+m)
	}
	// The wire names of the event's fields, the key's and version's
	// first: a clash is reported at the event's own field.
	wires := wireScope{}
	if k := e.Key; k != nil && k.Field != nil {
		members.declare(k.Field.Value, k.Field.Pos, "the key field "+k.Field.Value)
		if ent.Key.Wire != "" {
			wires[strings.ToLower(ent.Key.Wire)] = wireUse{field: ent.Key.Name, pos: k.Field.Pos}
		}
	}
	if d := e.Version; d != nil && d.Field != nil && (e.Key == nil || e.Key.Field == nil || e.Key.Field.Value != d.Field.Value) {
		members.declare(d.Field.Value, d.Field.Pos, "the version field "+d.Field.Value)
		if ent.Version != nil && ent.Version.Wire != "" {
			v.declareWire(wires, ent.Version.Wire, ent.Version.Name, d.Field.Pos)
		}
	}
	for _, f := range ev.Fields {
		if !v.checkExported(f.Name.Value, f.Name.Pos, "field name") {
			continue
		}
		members.declare(f.Name.Value, f.Name.Pos, "field "+f.Name.Value+" of event "+out.Name)
		t, err := parseType(f.Type.Value)
		if err != nil || f.Type.Tag != "!!str" {
			if err == nil {
				err = errNotString
			}
			v.errs.Add(f.Type.Pos, "%s", typeProblem("field", f.Type.Value, err, typeNames()))
			continue
		}
		v.fieldTypes = append(v.fieldTypes, typeUse{t: t, src: f.Type.Value, pos: f.Type.Pos})
		wire := v.wireName(f.Name.Value, f.Wire, rule)
		wirePos := f.Name.Pos
		if f.Wire != nil {
			wirePos = f.Wire.Pos
		}
		v.declareWire(wires, wire, f.Name.Value, wirePos)
		out.Fields = append(out.Fields, ir.Field{Name: f.Name.Value, Type: t, Wire: wire, Doc: docText(f.Doc)})
	}

	if k := ev.Kind; k != nil {
		switch {
		case e.Version == nil && e.Misspelt.Has("version"):
		case e.Version == nil:
			v.errs.Add(k.Pos, "kind needs a version: entity %s has no version, so snapshot and delta mean nothing", e.Name.Value)
		case k.Value == "snapshot" && k.Tag == "!!str":
			out.Snapshot = true
		case k.Value == "delta" && k.Tag == "!!str":
		default:
			kinds := Enumerations()["kind"]
			v.errs.Add(k.Pos, "kind must be %s, not %q%s", oneOf(kinds), k.Value, diag.Suggest(k.Value, kinds))
		}
	}
	if to := ev.To; to != nil {
		_, isBranch := ent.IsBranch(to.Value)
		switch {
		case len(e.States) == 0 && len(e.Branches) == 0:
			// Reported once for the entity (toWithoutStates).
		case ent.Rank(to.Value) == 0 && !isBranch && (statesUnknown(e) || slices.Contains(declaredStates(e), to.Value)):
			// A consequence of an error reported already: states: is
			// misspelt or not a list, or the state's name is invalid.
		case ent.Rank(to.Value) == 0 && !isBranch:
			v.errs.Add(to.Pos, "to: %q is not a state of entity %s%s", to.Value, e.Name.Value, diag.Suggest(to.Value, ent.StateNames()))
		default:
			out.To = to.Value
		}
	}
	return out
}
