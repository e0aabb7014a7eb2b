package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func publishers(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		ctx := func() jen.Code { return jen.Id("ctx").Qual("context", "Context") }
		Doc(f, 0, "%s publishes %s events. %s implements it in process; other "+
			"implementations can carry the same events elsewhere.", n.Publisher, e.Name, n.Dispatcher)
		f.Type().Id(n.Publisher).InterfaceFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				Doc(g, 1, "%s publishes %s %s event.", ev.Publish, Article(ev.Name), ev.Name)
				g.Id(ev.Publish).Params(ctx(), jen.Id("e").Id(ev.Name)).Error()
			}
		})
		f.Var().Id("_").Id(n.Publisher).Op("=").Parens(jen.Op("*").Id(n.Dispatcher)).Parens(jen.Nil())

		for _, ev := range e.Events {
			refused := "an event with an empty key"
			if e.Version != nil {
				refused += " or a version below 1"
			}
			Doc(f, 0, "%s hands e to every subscriber of the dispatcher. It refuses, "+
				"with an error wrapping runtime.ErrInvalidEvent, %s; the runtime's errors "+
				"(runtime.ErrBacklogFull, runtime.ErrClosed) say why an event was not "+
				"accepted.", ev.Publish, refused)
			f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id(ev.Publish).Params(ctx(), jen.Id("e").Id(ev.Name)).Error().BlockFunc(func(g *jen.Group) {
				prefix := "%w: " + e.Name + " event " + ev.Name + ": "
				if e.Key.Type.Name == "string" {
					g.If(jen.Id("e").Dot(e.Key.Name).Op("==").Lit("")).Block(jen.Return(
						errorf(prefix+"key field "+e.Key.Name+" is empty", rt("ErrInvalidEvent")),
					))
				}
				if v := e.Version; v != nil {
					cond := jen.Id("e").Dot(v.Name).Op("<").Lit(1)
					if unsigned(v.Type) {
						cond = jen.Id("e").Dot(v.Name).Op("==").Lit(0)
					}
					g.If(cond).Block(jen.Return(
						errorf(prefix+"version field "+v.Name+" is %d, below 1", rt("ErrInvalidEvent"), jen.Id("e").Dot(v.Name)),
					))
				}
				g.Return(jen.Id("d").Dot("topic").Dot("Publish").Call(jen.Id("ctx"), jen.Id("e").Dot(e.Key.Name), jen.Id("e")))
			})
		}

		Doc(f, 0, "Publish hands any %s event to every subscriber, through the Publish "+
			"method of its type. A nil e is refused with runtime.ErrInvalidEvent.", e.Name)
		f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Publish").Params(ctx(), jen.Id("e").Id(n.Event)).Error().Block(
			jen.Switch(jen.Id("e").Op(":=").Id("e").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
				for _, ev := range e.Events {
					g.Case(jen.Id(ev.Name)).Block(jen.Return(jen.Id("d").Dot(ev.Publish).Call(jen.Id("ctx"), jen.Id("e"))))
					g.Case(jen.Op("*").Id(ev.Name)).Block(jen.If(jen.Id("e").Op("!=").Nil()).Block(
						jen.Return(jen.Id("d").Dot(ev.Publish).Call(jen.Id("ctx"), jen.Op("*").Id("e"))),
					))
				}
			}),
			jen.Return(errorf("%w: nil "+e.Name+" event", rt("ErrInvalidEvent"))),
		)
	}
}
