package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// An entity's events travel through the engines in its body, alone. When
// they are small together (bodyLimit), they travel by value in the
// entity's body, a struct with a field per event, so that publishing one
// boxes nothing and its handler reads it from the engine's memory;
// otherwise (a wide entity's) they travel boxed (genimpl.Boxed), so that a
// queued event costs its own size, not the sum of all of them.

// bodyLimit is the most bytes of events an entity's body holds, estimated
// from their fields' types (eventSize): copying more than this at each
// hand-over costs about what boxing the event costs.
const bodyLimit = 128

// inlined returns the events of e when they travel by value (all of them),
// nil when they travel boxed.
func inlined(e *ir.Entity) []*ir.Event {
	total := 0
	for _, ev := range e.Events {
		size, ok := eventSize(e, ev)
		if !ok {
			return nil
		}
		total += size
	}
	if total > bodyLimit {
		return nil
	}
	return e.Events
}

// eventSize estimates the bytes of an event struct of e, false when a
// field's type is one whose size the generator does not know (a type of
// another package but time's).
func eventSize(e *ir.Entity, ev *ir.Event) (int, bool) {
	fields := append([]ir.Field{e.Key}, ev.Fields...)
	if e.Version != nil {
		fields = append(fields, *e.Version)
	}
	total := 0
	for _, f := range fields {
		size, ok := typeSize(f.Type)
		if !ok {
			return 0, false
		}
		total += size
	}
	return total, true
}

// typeSize is the size of a value of t on a 64-bit platform, rounded up to
// a word for the small ones (alignment).
func typeSize(t *ir.Type) (int, bool) {
	switch t.Kind {
	case ir.Slice:
		return 24, true
	case ir.Map, ir.Pointer:
		return 8, true
	case ir.Named:
		switch t.Path + "." + t.Name {
		case "time.Time":
			return 24, true
		case "time.Duration":
			return 8, true
		}
		return 0, false
	}
	switch t.Name {
	case "string":
		return 16, true
	case "bool", "int8", "uint8", "byte", "int16", "uint16", "int32", "uint32", "rune", "float32":
		return 4, true
	case "int", "uint", "int64", "uint64", "float64", "uintptr":
		return 8, true
	case "complex64":
		return 8, true
	case "complex128":
		return 16, true
	}
	return 0, false
}

// byValue reports whether the events of n's entity travel by value.
func (n names) byValue() bool { return len(inlined(n.e)) > 0 }

// bodyType is the type argument of genimpl's generic types for B: the
// entity's body, or genimpl.Boxed when its events travel boxed.
func (n names) bodyType() jen.Code {
	if !n.byValue() {
		return gi("Boxed").Types(jen.Id(n.Event))
	}
	return jen.Id(n.Body)
}

// body emits the entity's body (when its events travel by value), and
// returns the entity descriptor's fields that fill and read bodies: Wrap
// and Unwrap, or Box and Unwrap, and Kind and BodyVersion when the entity
// needs them.
func body(f *jen.File, n names) []jen.Code {
	in := inlined(n.e)
	versioned := n.e.Version != nil
	if len(in) == 0 {
		fields := []jen.Code{
			jen.Id("Box").Op(":").Add(gi("Box")).Types(jen.Id(n.Event)),
			jen.Id("Unwrap").Op(":").Add(gi("UnwrapBoxed")).Types(jen.Id(n.Event)),
			jen.Id("Kind").Op(":").Add(gi("BoxedKind")).Types(jen.Id(n.Event)),
		}
		if versioned {
			fields = append(fields, jen.Id("BodyVersion").Op(":").Add(gi("BoxedVersion")).Types(jen.Id(n.Event)))
		}
		return fields
	}
	// An entity of several events keeps the kind of the one its body
	// holds in the body; one of a single event needs none (kind 0).
	several := len(in) > 1
	text := "%s holds %s %s event as the engines carry it: by value, a field per event, " +
		"so that publishing one allocates nothing."
	if several {
		text += " Its kind is the event's index in the schema."
	}
	Doc(f, 0, text, n.Body, Article(n.e.Name), n.e.Name)
	f.Type().Id(n.Body).StructFunc(func(g *jen.Group) {
		for _, ev := range in {
			g.Id(ev.Name).Id(ev.Name)
		}
		if several {
			g.Id("kind").Uint8()
		}
	})
	wrap := jen.Id("Wrap").Op(":").Func().Params(jen.Id("e").Id(n.Event)).Params(jen.Id(n.Body), jen.Int()).Block(
		jen.Switch(jen.Id("e").Op(":=").Id("e").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			for kind, ev := range in { // all of the entity's events, in order
				g.Case(jen.Id(ev.Name)).Block(jen.Return(n.bodyOf(kind, ev), jen.Lit(kind)))
			}
		}),
		jen.Return(jen.Id(n.Body).Values(), jen.Lit(-1)),
	)
	unwrap := jen.Id("Unwrap").Op(":").Func().Params(jen.Id("kind").Int(), jen.Id("b").Id(n.Body)).Id(n.Event).Block(
		jen.Switch(jen.Id("kind")).BlockFunc(func(g *jen.Group) {
			for kind, ev := range in {
				g.Case(jen.Lit(kind)).Block(jen.Return(jen.Id("b").Dot(ev.Name)))
			}
		}),
		jen.Return(jen.Nil()),
	)
	fields := []jen.Code{wrap, unwrap}
	if several {
		fields = append(fields, jen.Id("Kind").Op(":").Func().Params(jen.Id("b").Id(n.Body)).Int().Block(
			jen.Return(jen.Int().Call(jen.Id("b").Dot("kind"))),
		))
	}
	if versioned {
		versionOf := func(ev *ir.Event) jen.Code { return jen.Return(jen.Id("b").Dot(ev.Name).Dot("EventVersion").Call()) }
		fields = append(fields, jen.Id("BodyVersion").Op(":").Func().Params(jen.Id("b").Id(n.Body)).Uint64().BlockFunc(func(g *jen.Group) {
			if !several {
				g.Add(versionOf(in[0]))
				return
			}
			g.Switch(jen.Id("b").Dot("kind")).BlockFunc(func(g *jen.Group) {
				for kind, ev := range in {
					g.Case(jen.Lit(kind)).Block(versionOf(ev))
				}
			})
			g.Return(jen.Lit(0))
		}))
	}
	return fields
}

// bodyOf is the literal of n's body that holds e, an event of ev of kind
// kind: with the kind when the entity has several events (kind 0, the zero
// value, left out).
func (n names) bodyOf(kind int, ev *ir.Event) jen.Code {
	value := jen.Id(ev.Name).Op(":").Id("e")
	if len(n.e.Events) > 1 && kind > 0 {
		value = jen.List(value, jen.Id("kind").Op(":").Lit(kind))
	}
	return jen.Id(n.Body).Values(value)
}
