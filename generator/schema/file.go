package schema

import "gopkg.in/yaml.v3"

func (l *loader) file(n *yaml.Node) *File {
	f := &File{Pos: pos(n)}
	for _, e := range l.fields(n, "the schema", false, "version", "package", "out", "wire_names", "defaults", "entities") {
		switch e.key.Value {
		case "out":
			f.Out = l.scalar(e.val, "out")
		case "wire_names":
			f.WireNames = l.scalar(e.val, "wire_names")
		case "version":
			f.Version = l.present(e.val, "version")
		case "package":
			f.Package = l.present(e.val, "package")
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

func (l *loader) entity(e entry) *Entity {
	ent := &Entity{Name: name(e.key)}
	where := "entity " + e.key.Value
	keys := append([]string{"key", "version", "states", "branches", "conflate", "on_gap", "batch", "notification", "wire_names", "events"}, policyKeyNames()...)
	for _, f := range l.fields(e.val, where, false, keys...) {
		switch f.key.Value {
		case "key":
			k := &KeyDecl{Pos: pos(f.key), Bad: !isMapping(f.val)}
			for _, kf := range l.fields(f.val, "key of "+where, false, "field", "type", "wire") {
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
			for _, vf := range l.fields(f.val, "version of "+where, false, "field", "type", "wire") {
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
			ent.States = l.list(f.val, "states")
		case "branches":
			for _, b := range l.pairs(f.val, "branches of "+where, false) {
				br := &Branch{Name: name(b.key), FromPos: pos(b.key)}
				for _, bf := range l.fields(b.val, "branch "+b.key.Value, false, "from") {
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
		case "events":
			ent.EventsPos = pos(f.key)
			ent.EventsBad = !isMapping(f.val)
			for _, ev := range l.pairs(f.val, "events of "+where, false) {
				ent.Events = append(ent.Events, l.event(ev))
			}
		default:
			l.policy(&ent.Policies, f, where)
		}
	}
	return ent
}

func (l *loader) event(e entry) *Event {
	ev := &Event{Name: name(e.key)}
	where := "event " + e.key.Value
	for _, f := range l.fields(e.val, where, true, "fields", "kind", "to") {
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
		}
	}
	return ev
}

// field loads one entry of an event's fields: Name: type, or Name: {type:
// type, wire: name}. It reports false when there is no usable type.
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
	for _, fe := range l.fields(e.val, "field "+e.key.Value, false, "type", "wire") {
		if fe.key.Value == "type" {
			typed = true
			typ = l.scalar(fe.val, "the type of field "+e.key.Value)
		} else {
			f.Wire = l.scalar(fe.val, "the wire name of field "+e.key.Value)
		}
	}
	if !typed {
		l.diags.Add(pos(e.val), "field %s needs a type: write %s: {type: string, wire: name}", e.key.Value, e.key.Value)
	}
	if typ == nil {
		return f, false
	}
	f.Type = *typ
	return f, true
}
