package breaking

import (
	"slices"
	"strings"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// Compare returns the breaking changes from old to new, each positioned in
// new and worded "RULE_ID: message"; format them with List.Format(path of
// new). An empty list means new is compatible with old.
func Compare(old, new *Schema) diag.List {
	c := &comparer{file: new.file}
	for _, oe := range old.pkg.Entities {
		ne, ns := entityOf(new, oe.Name)
		if ne == nil {
			c.add(new.file.EntitiesPos, EntityNoDelete, "entity %s was removed", oe.Name)
			continue
		}
		c.entity(oe, ne, ns)
	}
	return c.out
}

type comparer struct {
	out diag.List
	// file is the new schema as written, for the position of its
	// wire_names.
	file *schema.File
}

func (c *comparer) add(pos diag.Pos, rule, format string, args ...any) {
	c.out.Add(pos, rule+": "+format, args...)
}

// entityOf returns the entity name of s, resolved and as written.
func entityOf(s *Schema, name string) (*ir.Entity, *schema.Entity) {
	for i, e := range s.pkg.Entities {
		if e.Name == name {
			return e, s.file.Entities[i]
		}
	}
	return nil, nil
}

func (c *comparer) entity(oe, ne *ir.Entity, ns *schema.Entity) {
	name := oe.Name
	if oe.Key.Name != ne.Key.Name {
		c.add(ns.Key.Field.Pos, KeyFieldSame, "entity %s: key field %s was renamed %s", name, oe.Key.Name, ne.Key.Name)
	}
	if o, n := oe.Key.Type.Schema(), ne.Key.Type.Schema(); o != n {
		c.add(ns.Key.Type.Pos, KeyTypeSame, "entity %s: key type changed from %s to %s", name, o, n)
	}
	if oe.Key.Name == ne.Key.Name {
		c.wire("entity "+name+": key field", oe.Key, ne.Key, c.wirePos(ns, ns.Key.Wire, ns.Key.Field.Pos))
	}
	c.version(oe, ne, ns)
	c.states(oe, ne, ns)
	c.brokers(oe, ne, ns)
	switch {
	case oe.Notification != ne.Notification:
		pos := ns.Name.Pos
		if ns.Notification != nil {
			pos = ns.Notification.Pos
		}
		if ne.Notification {
			c.add(pos, NotificationSame, "entity %s became notifications: its events carry only the key and are coalesced, and handlers of the older schema expect their content, in order", name)
		} else {
			c.add(pos, NotificationSame, "entity %s stopped being notifications: producers of the older schema send key-only notifications, and parked ones have no content to apply", name)
		}
	case !oe.Conflate && ne.Conflate:
		c.add(ns.Conflate.Pos, ConflateNotEnabled, "entity %s: conflate was turned on", name)
	}
	// on_gap and batch: change how the handlers get the events, not the
	// events or what is stored: compatible.
	for _, oev := range oe.Events {
		i := slices.IndexFunc(ne.Events, func(e *ir.Event) bool { return e.Name == oev.Name })
		if i < 0 {
			pos := ns.EventsPos
			if pos.Line == 0 {
				pos = ns.Name.Pos
			}
			c.add(pos, EventNoDelete, "entity %s: event %s was removed", name, oev.Name)
			continue
		}
		c.event(oe, oev, ne, ne.Events[i], ns.Events[i], ns)
	}
}

func (c *comparer) version(oe, ne *ir.Entity, ns *schema.Entity) {
	name := oe.Name
	switch {
	case oe.Version == nil && ne.Version == nil:
	case oe.Version == nil:
		c.add(ns.Version.Pos, VersionFieldSame, "entity %s: version %s was added; producers of the older schema send no version", name, ne.Version.Name)
	case ne.Version == nil:
		c.add(ns.Name.Pos, VersionFieldSame, "entity %s: version %s was removed; duplicates and gaps go undetected and stored versions are abandoned", name, oe.Version.Name)
	default:
		if oe.Version.Name != ne.Version.Name {
			c.add(ns.Version.Field.Pos, VersionFieldSame, "entity %s: version field %s was renamed %s", name, oe.Version.Name, ne.Version.Name)
		} else {
			c.wire("entity "+name+": version field", *oe.Version, *ne.Version, c.wirePos(ns, ns.Version.Wire, ns.Version.Field.Pos))
		}
		if o, n := oe.Version.Type.Schema(), ne.Version.Type.Schema(); o != n {
			pos := ns.Version.Pos
			if ns.Version.Type != nil {
				pos = ns.Version.Type.Pos
			}
			c.add(pos, VersionTypeSame, "entity %s: version type changed from %s to %s", name, o, n)
		}
	}
}

func (c *comparer) states(oe, ne *ir.Entity, ns *schema.Entity) {
	name := oe.Name
	statesPos := ns.StatesPos
	if statesPos.Line == 0 {
		statesPos = ns.Name.Pos
	}
	isBranch := func(e *ir.Entity, s string) bool { _, ok := e.IsBranch(s); return ok }
	for _, s := range oe.States {
		switch {
		case isBranch(ne, s):
			c.add(branchPos(ns, s), StateNoDelete, "entity %s: ranked state %s became a branch state", name, s)
		case ne.Rank(s) == 0:
			c.add(statesPos, StateNoDelete, "entity %s: state %s was removed", name, s)
		}
	}
	for _, b := range oe.Branches {
		nb, ok := ne.IsBranch(b.Name)
		switch {
		case ne.Rank(b.Name) > 0:
			c.add(statePos(ns, b.Name), StateNoDelete, "entity %s: branch state %s became a ranked state", name, b.Name)
			continue
		case !ok:
			c.add(statesPos, StateNoDelete, "entity %s: branch state %s was removed", name, b.Name)
			continue
		}
		for _, from := range b.From {
			if !slices.Contains(nb.From, from) {
				c.add(branchFromPos(ns, b.Name), BranchFromNoDelete, "entity %s: branch state %s may no longer be entered from %s", name, b.Name, from)
			}
		}
	}
	// The ranked states of old that are still ranked must start new's
	// ranked states, in the same order.
	var kept []string
	for _, s := range oe.States {
		if ne.Rank(s) > 0 {
			kept = append(kept, s)
		}
	}
	for i, s := range kept {
		if ne.States[i] == s {
			continue
		}
		n := ne.States[i]
		if oe.Rank(n) == 0 {
			c.add(statePos(ns, n), StateOrderSame, "entity %s: state %s was inserted before %s, changing the ranks after it; append new states after %s", name, n, s, ne.States[len(ne.States)-1])
		} else {
			c.add(statePos(ns, n), StateOrderSame, "entity %s: ranked states were reordered: %s is now where %s was (older order: %s)", name, n, s, strings.Join(oe.States, ", "))
		}
		break
	}
}

func statePos(ns *schema.Entity, state string) diag.Pos {
	for _, s := range ns.States {
		if s.Value == state {
			return s.Pos
		}
	}
	return ns.Name.Pos
}

func branchPos(ns *schema.Entity, state string) diag.Pos {
	for _, b := range ns.Branches {
		if b.Name.Value == state {
			return b.Name.Pos
		}
	}
	return ns.Name.Pos
}

func branchFromPos(ns *schema.Entity, state string) diag.Pos {
	for _, b := range ns.Branches {
		if b.Name.Value == state {
			return b.FromPos
		}
	}
	return ns.Name.Pos
}

func (c *comparer) event(oe *ir.Entity, oev *ir.Event, ne *ir.Entity, nev *ir.Event, ns *schema.Event, es *schema.Entity) {
	where := "entity " + oe.Name + ", event " + oev.Name
	if oe.Version != nil && ne.Version != nil && oev.Snapshot != nev.Snapshot {
		pos := ns.Name.Pos
		if ns.Kind != nil {
			pos = ns.Kind.Pos
		}
		c.add(pos, EventKindSame, "%s: kind changed from %s to %s", where, kind(oev), kind(nev))
	}
	if oev.To != nev.To {
		pos := ns.Name.Pos
		if ns.To != nil {
			pos = ns.To.Pos
		}
		c.add(pos, EventStateSame, "%s: moves to %s instead of %s", where, orNone(nev.To), orNone(oev.To))
	}
	c.within(where, oev, nev, ns)
	for _, of := range oev.Fields {
		i := slices.IndexFunc(nev.Fields, func(f ir.Field) bool { return f.Name == of.Name })
		if i < 0 {
			c.add(ns.Name.Pos, FieldNoDelete, "%s: field %s was removed", where, of.Name)
			continue
		}
		if o, n := of.Type.Schema(), nev.Fields[i].Type.Schema(); o != n {
			c.add(ns.Fields[i].Type.Pos, FieldSameType, "%s: field %s changed type from %s to %s", where, of.Name, o, n)
		}
		c.wire(where+": field", of, nev.Fields[i], c.wirePos(es, ns.Fields[i].Wire, ns.Fields[i].Name.Pos))
	}
}

// within reports an in: added to an event that had none, or a state
// removed from its in:: the state guard would skip the event where it
// applied. An in: widened or removed lets it apply in more states.
func (c *comparer) within(where string, oev, nev *ir.Event, ns *schema.Event) {
	if len(nev.In) == 0 {
		return
	}
	if len(oev.In) == 0 {
		c.add(ns.InPos, EventInNoNarrow, "%s: in: was added: the event applies only in %s, no longer in every state", where, strings.Join(nev.In, ", "))
		return
	}
	var gone []string
	for _, s := range oev.In {
		if !slices.Contains(nev.In, s) {
			gone = append(gone, s)
		}
	}
	if len(gone) > 0 {
		c.add(ns.InPos, EventInNoNarrow, "%s: in: no longer lists %s: the event is skipped there", where, strings.Join(gone, ", "))
	}
}

func kind(ev *ir.Event) string {
	if ev.Snapshot {
		return "snapshot"
	}
	return "delta"
}

func orNone(state string) string {
	if state == "" {
		return "no state"
	}
	return "state " + state
}

// wire reports a field (key, version) whose wire name changed, at pos.
func (c *comparer) wire(what string, of, nf ir.Field, pos diag.Pos) {
	if of.Wire != nf.Wire {
		c.add(pos, WireNameSame, "%s %s changed its wire name from %q to %q", what, of.Name, of.Wire, nf.Wire)
	}
}

// wirePos is where a field's wire name comes from in the new schema: its
// own wire:, else the entity's or the file's wire_names, else the field.
func (c *comparer) wirePos(ns *schema.Entity, own *schema.Scalar, field diag.Pos) diag.Pos {
	switch {
	case own != nil:
		return own.Pos
	case ns.WireNames != nil:
		return ns.WireNames.Pos
	case c.file.WireNames != nil:
		return c.file.WireNames.Pos
	}
	return field
}
