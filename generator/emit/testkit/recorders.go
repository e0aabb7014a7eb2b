package testkit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/emit"
)

func (k kit) recorders(f *jen.File) {
	for _, e := range k.pkg.Entities {
		n := namesOf(e)
		ctx := jen.Id("ctx").Qual("context", "Context")
		events := jen.Index().Add(k.gen(n.Event))

		emit.Doc(f, 0, "%s is %s %s.%s that records every event it handled, in "+
			"handling order. It passes each event to its next handler first, when it "+
			"has one, and records the event only when that handler returns nil. It is "+
			"safe for concurrent use.", n.Recorder, emit.Article(k.pkg.Name), k.pkg.Name, n.Handler)
		f.Type().Id(n.Recorder).Struct(
			jen.Id("next").Add(k.gen(n.Handler)),
			jen.Id("mu").Qual("sync", "Mutex"),
			jen.Id("events").Add(events.Clone()),
		)
		f.Line()
		f.Var().Id("_").Add(k.gen(n.Handler)).Op("=").Parens(jen.Op("*").Id(n.Recorder)).Parens(jen.Nil())
		f.Line()
		emit.Doc(f, 0, "%s returns a recorder that passes each event to next first; a nil "+
			"next only records.", n.NewRecorder)
		f.Func().Id(n.NewRecorder).Params(jen.Id("next").Add(k.gen(n.Handler))).Op("*").Id(n.Recorder).Block(
			jen.Return(jen.Op("&").Id(n.Recorder).Add(emit.Keyed(emit.Field{Name: "next", Value: jen.Id("next")}))),
		)
		for _, ev := range e.Events {
			method := ev.Handle
			f.Line()
			emit.Doc(f, 0, "%s implements %s.%s.", method, k.pkg.Name, n.Handler)
			f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(method).Params(ctx.Clone(), jen.Id("e").Add(k.gen(ev.Name))).Error().Block(
				jen.If(jen.Id("r").Dot("next").Op("!=").Nil()).Block(
					jen.If(jen.Err().Op(":=").Id("r").Dot("next").Dot(method).Call(jen.Id("ctx"), jen.Id("e")), jen.Err().Op("!=").Nil()).Block(
						jen.Return(jen.Err()),
					),
				),
				jen.Id("r").Dot("record").Call(jen.Id("e")),
				jen.Return(jen.Nil()),
			)
		}
		f.Line()
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("record").Params(jen.Id("e").Add(k.gen(n.Event))).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Id("r").Dot("events").Op("=").Append(jen.Id("r").Dot("events"), jen.Id("e")),
		)
		f.Line()
		emit.Doc(f, 0, "Events returns the events handled so far, in handling order.")
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Events").Params().Add(events.Clone()).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Return(jen.Qual("slices", "Clone").Call(jen.Id("r").Dot("events"))),
		)
		f.Line()
		emit.Doc(f, 0, "EventsOf returns the events of the %s with key key handled so far, in "+
			"handling order.", e.Name)
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("EventsOf").Params(jen.Id("key").Add(k.keyType(e))).Add(events.Clone()).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Var().Id("out").Add(events.Clone()),
			jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("r").Dot("events")).Block(
				jen.If(jen.Id("e").Dot("EventKey").Call().Op("==").Id("key")).Block(
					jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("e")),
				),
			),
			jen.Return(jen.Id("out")),
		)
		f.Line()
		emit.Doc(f, 0, "Reset forgets the events recorded so far.")
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Reset").Params().Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Id("r").Dot("events").Op("=").Nil(),
		)
	}
}
