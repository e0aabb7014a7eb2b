package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func handlers(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		f.Commentf("%s handles the events of entity %s, one typed method per event.", n.Handler, e.Name)
		f.Commentf("A %s calls the methods of one %s in publication order, one event", n.Dispatcher, e.Name)
		f.Comment("at a time, after the generated guards let the event through. A method that")
		f.Comment("returns an error is retried in place; wrap the error with runtime.Permanent")
		f.Comment("to apply the exhaustion policy at once.")
		f.Type().Id(n.Handler).InterfaceFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				g.Commentf("Handle%s handles %s %s event.", ev.Name, article(ev.Name), ev.Name)
				g.Id("Handle"+ev.Name).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("e").Id(ev.Name)).Error()
			}
		})
	}
}
