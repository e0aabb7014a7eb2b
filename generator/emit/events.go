package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func events(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		var evNames []string
		for _, ev := range e.Events {
			evNames = append(evNames, ev.Name)
		}
		f.Commentf("%s is an event of entity %s: %s. The interface is sealed: only", n.Event, e.Name, list(evNames, "or"))
		f.Comment("the event types generated in this package implement it.")
		f.Type().Id(n.Event).InterfaceFunc(func(g *jen.Group) {
			g.Comment("EventName returns the event's name as declared in the schema.")
			g.Id("EventName").Params().String()
			g.Commentf("EventKey returns the key of the %s the event belongs to (its %s field).", e.Name, e.Key.Name)
			g.Id("EventKey").Params().Add(n.key())
			if e.Version != nil {
				g.Commentf("EventVersion returns the event's version (its %s field).", e.Version.Name)
				g.Id("EventVersion").Params().Uint64()
			}
			g.Id("is" + n.Event).Params()
		})
		for _, ev := range e.Events {
			event(f, n, ev)
		}
	}
}

func event(f *jen.File, n names, ev *ir.Event) {
	e := n.e
	f.Commentf("%s is an event of entity %s.", ev.Name, e.Name)
	if e.Version != nil {
		if ev.Snapshot {
			f.Comment("It is a snapshot: it carries the full state, so it is applied even across a")
			f.Comment("version gap (the newer state wins).")
		} else {
			f.Comment("It is a delta: it is applied only right after the version before it.")
		}
	}
	if ev.To != "" {
		f.Commentf("Handling it moves the %s to state %s.", e.Name, ev.To)
	}
	f.Type().Id(ev.Name).StructFunc(func(g *jen.Group) {
		g.Commentf("%s is the key of the %s this event belongs to.", e.Key.Name, e.Name)
		g.Id(e.Key.Name).Add(n.key())
		if e.Version != nil {
			g.Commentf("%s is the %s's version after this event: 1 for its first event,", e.Version.Name, e.Name)
			g.Comment("then one more for each event.")
			g.Id(e.Version.Name).Add(typ(e.Version.Type))
		}
		for _, fl := range ev.Fields {
			g.Commentf("%s is declared in the schema as %s.", fl.Name, fl.Type)
			g.Id(fl.Name).Add(typ(fl.Type))
		}
	})
	f.Line()
	f.Commentf("EventName returns %q.", ev.Name)
	f.Func().Params(jen.Id(ev.Name)).Id("EventName").Params().String().Block(jen.Return(jen.Lit(ev.Name)))
	f.Line()
	f.Commentf("EventKey returns e.%s.", e.Key.Name)
	f.Func().Params(jen.Id("e").Id(ev.Name)).Id("EventKey").Params().Add(n.key()).Block(jen.Return(jen.Id("e").Dot(e.Key.Name)))
	if e.Version != nil {
		f.Line()
		f.Commentf("EventVersion returns e.%s.", e.Version.Name)
		f.Func().Params(jen.Id("e").Id(ev.Name)).Id("EventVersion").Params().Uint64().Block(jen.Return(versionExpr(e, jen.Id("e"))))
	}
	f.Line()
	f.Func().Params(jen.Id(ev.Name)).Id("is" + n.Event).Params().Block()
}
