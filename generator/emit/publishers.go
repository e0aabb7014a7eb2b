package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// publishers emits each entity's publisher interface and the dispatcher's
// typed Publish methods, which hand their event to the generic Publish.
func publishers(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		Doc(f, 0, "%s publishes %s events. %s implements it in process, %s through a "+
			"transport; other implementations can carry the same events elsewhere.", n.Publisher, e.Name, n.Dispatcher, n.Producer)
		f.Type().Id(n.Publisher).InterfaceFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				Doc(g, 1, "%s publishes %s %s event.", ev.Publish, Article(ev.Name), ev.Name)
				g.Id(ev.Publish).Params(ctxParam(), jen.Id("e").Id(ev.Name)).Error()
			}
		})
		f.Var().Id("_").Id(n.Publisher).Op("=").Parens(jen.Op("*").Id(n.Dispatcher)).Parens(jen.Nil())
		refused := "an event with an empty key"
		if e.Key.Type.Name != "string" {
			refused = ""
		}
		if e.Version != nil {
			refused = list(append(nonEmpty(refused), "a version below 1"), "or")
		}
		for kind, ev := range e.Events {
			text := "%s hands e to every subscriber of the dispatcher (see Publish)."
			if refused != "" {
				text = "%s hands e to every subscriber of the dispatcher. It refuses " + refused +
					" with an error wrapping runtime.ErrInvalidEvent, and returns the runtime's " +
					"refusal (see Publish)."
			}
			Doc(f, 0, text, ev.Publish)
			publish := jen.Id("d").Dot("Publish").Call(jen.Id("ctx"), jen.Id("e"))
			if n.byValue() {
				version := versionOf(e)
				if version == nil {
					version = jen.Lit(0)
				}
				publish = gi("PublishBody").Call(jen.Id("ctx"), jen.Id("d").Dot(n.Core), jen.Id("e").Dot(e.Key.Name),
					jen.Lit(kind), version, n.bodyOf(kind, ev))
			}
			f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id(ev.Publish).Params(ctxParam(), jen.Id("e").Id(ev.Name)).Error().Block(
				jen.Return(publish),
			)
		}
	}
}

// versionOf is the version of e's event e, as a publisher reads it: nil
// without a version.
func versionOf(e *ir.Entity) jen.Code {
	if e.Version == nil {
		return nil
	}
	return jen.Id("e").Dot("EventVersion").Call()
}

// ctxParam is a method's first parameter, ctx.
func ctxParam() jen.Code { return jen.Id("ctx").Qual("context", "Context") }

// nonEmpty returns s as a list of one, none for "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
