package schema

import "gopkg.in/yaml.v3"

var policyKeys = []string{"delivery", "retry", "timeout", "on_exhausted", "backlog", "lanes", "resequencer"}

func (l *loader) file(n *yaml.Node) *File {
	f := &File{Pos: pos(n)}
	for _, e := range l.fields(n, "the schema", false, "version", "package", "defaults", "entities") {
		switch e.key.Value {
		case "version":
			f.Version = l.present(e.val, "version")
		case "package":
			f.Package = l.present(e.val, "package")
		case "defaults":
			f.Defaults = &Policies{}
			for _, pe := range l.fields(e.val, "defaults", true, policyKeys...) {
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

// policy loads one policy key (one of policyKeys) into p.
func (l *loader) policy(p *Policies, e entry, where string) {
	what := e.key.Value + " in " + where
	switch e.key.Value {
	case "delivery":
		p.Delivery = l.scalar(e.val, what)
	case "timeout":
		p.Timeout = l.scalar(e.val, what)
	case "on_exhausted":
		p.OnExhausted = l.scalar(e.val, what)
	case "retry":
		r := &Retry{Pos: pos(e.val)}
		l.scalars(e.val, what, "retry", []scalarField{
			{"attempts", &r.Attempts},
			{"initial", &r.Initial},
			{"max", &r.Max},
			{"multiplier", &r.Multiplier},
			{"jitter", &r.Jitter},
		})
		p.Retry = r
	case "backlog":
		b := &Backlog{Pos: pos(e.val)}
		l.scalars(e.val, what, "backlog", []scalarField{
			{"per_key", &b.PerKey},
			{"total", &b.Total},
			{"when_full", &b.WhenFull},
			{"wait", &b.Wait},
		})
		p.Backlog = b
	case "lanes":
		ln := &Lanes{Pos: pos(e.val)}
		l.scalars(e.val, what, "lanes", []scalarField{{"max_active", &ln.MaxActive}})
		p.Lanes = ln
	case "resequencer":
		r := &Resequencer{Pos: pos(e.key)}
		l.scalars(e.val, what, "resequencer", []scalarField{
			{"max_events", &r.MaxEvents},
			{"max_wait", &r.MaxWait},
		})
		p.Resequencer = r
	}
}

// scalarField is one key of a policy mapping whose value is a single
// scalar, and the field that receives it.
type scalarField struct {
	key string
	dst **Scalar
}

// scalars loads the mapping n, named what in messages, whose keys are
// those of fs: each value must be a single value, named prefix.key in
// messages, and is stored in its field. Other keys are reported.
func (l *loader) scalars(n *yaml.Node, what, prefix string, fs []scalarField) {
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	for _, e := range l.fields(n, what, false, keys...) {
		s := l.scalar(e.val, prefix+"."+e.key.Value)
		for _, f := range fs {
			if f.key == e.key.Value {
				*f.dst = s
			}
		}
	}
}

func (l *loader) entity(e entry) *Entity {
	ent := &Entity{Name: name(e.key)}
	where := "entity " + e.key.Value
	keys := append([]string{"key", "version", "states", "branches", "conflate", "events"}, policyKeys...)
	for _, f := range l.fields(e.val, where, false, keys...) {
		switch f.key.Value {
		case "key":
			k := &KeyDecl{Pos: pos(f.key), Bad: !isMapping(f.val)}
			for _, kf := range l.fields(f.val, "key of "+where, false, "field", "type") {
				if kf.key.Value == "field" {
					k.Field = l.present(kf.val, "key.field")
				} else {
					k.Type = l.present(kf.val, "key.type")
				}
			}
			ent.Key = k
		case "version":
			v := &VersionDecl{Pos: pos(f.key), Bad: !isMapping(f.val)}
			for _, vf := range l.fields(f.val, "version of "+where, false, "field", "type") {
				if vf.key.Value == "field" {
					v.Field = l.present(vf.val, "version.field")
				} else {
					v.Type = l.present(vf.val, "version.type")
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
				t := l.scalar(fe.val, "the type of field "+fe.key.Value)
				if t == nil {
					continue
				}
				ev.Fields = append(ev.Fields, Field{Name: name(fe.key), Type: *t})
			}
		case "kind":
			ev.Kind = l.scalar(f.val, "kind")
		case "to":
			ev.To = l.scalar(f.val, "to")
		}
	}
	return ev
}
