package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func handlers(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		Doc(f, 0, "%s handles the events of entity %s, one typed method per event. "+
			"%s %s calls the methods of one %s in publication order, one event "+
			"at a time, after the generated guards let the event through. A method that "+
			"returns an error is retried in place; wrap the error with runtime.Permanent "+
			"to apply the exhaustion policy at once.", n.Handler, e.Name, capitalize(Article(n.Dispatcher)), n.Dispatcher, e.Name)
		f.Type().Id(n.Handler).InterfaceFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				Doc(g, 1, "%s handles %s %s event.", ev.Handle, Article(ev.Name), ev.Name)
				g.Id(ev.Handle).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("e").Id(ev.Name)).Error()
			}
		})
		unimplementedBase(f, n, n.Handler, n.UnimplementedHandler, nil)
	}
}

// unimplementedBase emits base, the embeddable base of the handler
// interface iface: one method per event that returns
// runtime.ErrUnimplemented. extra are the parameters between the context
// and the event (the transaction).
func unimplementedBase(f *jen.File, n names, iface, base string, extra []jen.Code) {
	e := n.e
	Doc(f, 0, "%s is %s %s that implements no event: embed it in your "+
		"handler so that it keeps compiling when the schema gains events, as "+
		"gRPC's Unimplemented servers do. Without it, a new event breaks every "+
		"handler at compile time, which is the safe default. An event that reaches "+
		"one of its methods is acknowledged, not applied: the guards still advance "+
		"the key's version and state, so no gap is left behind, and the event is "+
		"counted as skipped with the reason \"unimplemented\" "+
		"(runtime.ReasonUnimplemented).", base, Article(iface), iface)
	f.Type().Id(base).Struct()
	f.Var().Id("_").Id(iface).Op("=").Id(base).Values()
	for _, ev := range e.Events {
		params := append([]jen.Code{jen.Qual("context", "Context")}, extra...)
		params = append(params, jen.Id(ev.Name))
		Doc(f, 0, "%s returns runtime.ErrUnimplemented.", ev.Handle)
		f.Func().Params(jen.Id(base)).Id(ev.Handle).Params(params...).Error().Block(jen.Return(rt("ErrUnimplemented")))
	}
}
