package schema

import (
	"slices"

	"gopkg.in/yaml.v3"
)

func (l *loader) file(n *yaml.Node) *File {
	f := &File{Pos: pos(n)}
	entries, misspelt := l.keyed(n, "the schema", false, nil, "version", "package", "doc", "out", "wire_names", "defaults", "entities")
	f.Misspelt = misspelt
	for _, e := range entries {
		switch e.key.Value {
		case "out":
			f.Out = l.scalar(e.val, "out")
		case "wire_names":
			f.WireNames = l.scalar(e.val, "wire_names")
		case "version":
			f.Version = l.present(e.val, "version")
		case "package":
			f.Package = l.present(e.val, "package")
		case "doc":
			f.Doc = l.doc(e.val, "the schema")
		case "defaults":
			f.Defaults = &Policies{}
			for _, pe := range l.fields(e.val, "defaults", true, policyKeyNames()...) {
				l.policy(f.Defaults, pe, "defaults")
			}
		case "entities":
			f.EntitiesPos = pos(e.key)
			f.EntitiesBad = !isMapping(e.val)
			for _, ee := range l.pairs(e.val, "entities", false) {
				f.Entities = append(f.Entities, l.entity(ee))
			}
		}
	}
	return f
}

// entityKeys are the keys of an entity that are not policies.
var entityKeys = []string{"key", "version", "states", "branches", "conflate", "on_gap", "batch", "notification", "wire_names", "brokers", "doc", "events"}

func (l *loader) entity(e entry) *Entity {
	ent := &Entity{Name: name(e.key)}
	where := "entity " + e.key.Value
	entries, misspelt := l.keyed(e.val, where, false, nil, append(slices.Clone(entityKeys), policyKeyNames()...)...)
	ent.Misspelt = misspelt
	for _, f := range entries {
		switch f.key.Value {
		case "key":
			k := &KeyDecl{Pos: pos(f.key), Bad: !isMapping(f.val)}
			var kfs []entry
			kfs, k.Misspelt = l.keyed(f.val, "key of "+where, false, nil, "field", "type", "wire")
			for _, kf := range kfs {
				switch kf.key.Value {
				case "field":
					k.Field = l.present(kf.val, "key.field")
				case "type":
					k.Type = l.present(kf.val, "key.type")
				default:
					k.Wire = l.scalar(kf.val, "key.wire")
				}
			}
			ent.Key = k
		case "version":
			v := &VersionDecl{Pos: pos(f.key), Bad: !isMapping(f.val)}
			var vfs []entry
			vfs, v.Misspelt = l.keyed(f.val, "version of "+where, false, nil, "field", "type", "wire")
			for _, vf := range vfs {
				switch vf.key.Value {
				case "field":
					v.Field = l.present(vf.val, "version.field")
				case "type":
					v.Type = l.present(vf.val, "version.type")
				default:
					v.Wire = l.scalar(vf.val, "version.wire")
				}
			}
			ent.Version = v
		case "states":
			ent.StatesPos = pos(f.key)
			ent.StatesBad = f.val.Kind != yaml.SequenceNode
			ent.States, ent.StateDocs = l.states(f.val)
		case "branches":
			for _, b := range l.pairs(f.val, "branches of "+where, false) {
				br := &Branch{Name: name(b.key), FromPos: pos(b.key)}
				var bfs []entry
				bfs, br.Misspelt = l.keyed(b.val, "branch "+b.key.Value, false, nil, "from", "doc")
				for _, bf := range bfs {
					if bf.key.Value == "doc" {
						br.Doc = l.doc(bf.val, "branch "+b.key.Value)
						continue
					}
					br.FromPos = pos(bf.val)
					br.From = l.list(bf.val, "from")
				}
				ent.Branches = append(ent.Branches, br)
			}
		case "conflate":
			ent.Conflate = l.scalar(f.val, "conflate")
		case "on_gap":
			ent.OnGap = l.scalar(f.val, "on_gap")
		case "notification":
			ent.Notification = l.scalar(f.val, "notification")
		case "batch":
			b := &BatchDecl{Pos: pos(f.key), Bad: !isMapping(f.val) && !isNull(f.val)}
			for _, bf := range l.fields(f.val, "batch of "+where, true, "max_events", "linger") {
				if bf.key.Value == "max_events" {
					b.MaxEvents = l.scalar(bf.val, "batch.max_events")
				} else {
					b.Linger = l.scalar(bf.val, "batch.linger")
				}
			}
			ent.Batch = b
		case "wire_names":
			ent.WireNames = l.scalar(f.val, "wire_names")
		case "brokers":
			ent.BrokersPos = pos(f.key)
			ent.Brokers = l.brokers(f.val, where)
		case "doc":
			ent.Doc = l.doc(f.val, where)
		case "events":
			ent.EventsPos = pos(f.key)
			ent.EventsBad = !isMapping(f.val)
			for _, ev := range l.pairs(f.val, "events of "+where, false) {
				ent.Events = append(ent.Events, l.event(ev, e.key.Value))
			}
		default:
			l.policy(&ent.Policies, f, where)
		}
	}
	return ent
}

// states loads an entity's ranked states: a list whose items are a state's
// name, or a mapping of one state's name to its settings ({doc: ...}).
func (l *loader) states(n *yaml.Node) ([]Scalar, map[string]*Scalar) {
	if n.Kind != yaml.SequenceNode {
		if n.Kind != yaml.AliasNode {
			l.diags.Add(pos(n), "states must be a list, found %s", kindName(n))
		}
		return nil, nil
	}
	var docs map[string]*Scalar
	out := make([]Scalar, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.MappingNode {
			if s := l.scalar(c, "an item of states"); s != nil {
				out = append(out, *s)
			}
			continue
		}
		if len(c.Content) != 2 {
			l.diags.Add(pos(c), "an item of states is a state's name, or one name with its settings (Open: {doc: ...}), found a mapping of %d names", len(c.Content)/2)
			continue
		}
		k := c.Content[0]
		if k.Kind != yaml.ScalarNode {
			l.diags.Add(pos(k), "an item of states must start with a state's name, found %s", kindName(k))
			continue
		}
		out = append(out, name(k))
		for _, sf := range l.fields(c.Content[1], "state "+k.Value, true, "doc") {
			if d := l.doc(sf.val, "state "+k.Value); d != nil {
				if docs == nil {
					docs = make(map[string]*Scalar)
				}
				docs[k.Value] = d
			}
		}
	}
	return out, docs
}

// eventKeys are the keys of an event.
var eventKeys = []string{"fields", "kind", "to", "in", "doc"}

func (l *loader) event(e entry, entity string) *Event {
	ev := &Event{Name: name(e.key)}
	where := "event " + e.key.Value
	// A key of the entity written on an event belongs one level up: say
	// so, rather than guess a misspelling.
	elsewhere := func(key string) string {
		if slices.Contains(policyKeyNames(), key) {
			return key + " is a policy, which applies to every event of a key (they share one lane): set it on entity " + entity + " or in defaults:, not on event " + e.key.Value
		}
		if slices.Contains(entityKeys, key) {
			return key + " belongs on entity " + entity + ", not on event " + e.key.Value
		}
		return ""
	}
	entries, _ := l.keyed(e.val, where, true, elsewhere, eventKeys...)
	for _, f := range entries {
		switch f.key.Value {
		case "fields":
			for _, fe := range l.pairs(f.val, "fields of "+where, true) {
				if fld, ok := l.field(fe); ok {
					ev.Fields = append(ev.Fields, fld)
				}
			}
		case "kind":
			ev.Kind = l.scalar(f.val, "kind")
		case "to":
			ev.To = l.scalar(f.val, "to")
		case "in":
			ev.InPos = pos(f.key)
			ev.InBad = f.val.Kind != yaml.SequenceNode
			ev.In = l.list(f.val, "in")
		case "doc":
			ev.Doc = l.doc(f.val, where)
		}
	}
	return ev
}

// field loads one entry of an event's fields: Name: type, or Name: {type:
// type, wire: name, doc: text}. It reports false when there is no usable
// type.
func (l *loader) field(e entry) (Field, bool) {
	f := Field{Name: name(e.key)}
	if !isMapping(e.val) {
		t := l.scalar(e.val, "the type of field "+e.key.Value)
		if t == nil {
			return f, false
		}
		f.Type = *t
		return f, true
	}
	var typ *Scalar
	typed := false
	fields, misspelt := l.keyed(e.val, "field "+e.key.Value, false, nil, "type", "wire", "doc")
	for _, fe := range fields {
		switch fe.key.Value {
		case "type":
			typed = true
			typ = l.scalar(fe.val, "the type of field "+e.key.Value)
		case "wire":
			f.Wire = l.scalar(fe.val, "the wire name of field "+e.key.Value)
		default:
			f.Doc = l.doc(fe.val, "field "+e.key.Value)
		}
	}
	if !typed && !misspelt.Has("type") {
		l.diags.Add(pos(e.val), "field %s needs a type: write %s: {type: string, wire: name}", e.key.Value, e.key.Value)
	}
	if typ == nil {
		return f, false
	}
	f.Type = *typ
	return f, true
}

// doc loads a doc: value, text of one line or more, for what (in
// messages).
func (l *loader) doc(n *yaml.Node, what string) *Scalar {
	if n.Kind != yaml.ScalarNode {
		if n.Kind != yaml.AliasNode {
			l.diags.Add(pos(n), "the doc of %s must be text (a sentence that describes it), found %s", what, kindName(n))
		}
		return nil
	}
	s := l.scalar(n, "the doc of "+what)
	switch {
	case s.Tag != "!!str" || s.Value == "":
		l.diags.Add(s.Pos, "the doc of %s must be text (a sentence that describes it), not %q", what, s.Value)
		return nil
	}
	return s
}
