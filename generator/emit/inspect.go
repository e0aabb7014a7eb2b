package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// InspectPath is the import path of the operator's view that the
// dispatchers' Inspector methods return.
const InspectPath = RuntimePath + "/inspect"

// inspectors emits each dispatcher's Inspector method: the runtime's
// inspect.Engines over the dispatcher's subscribers, with the entity's codec
// and its guards' Version and State, so that an operator's console
// (runtime/console) shows keys as text and events as the codec's JSON.
func inspectors(f *jen.File, pkg *ir.Package) {
	f.ImportName(InspectPath, "inspect")
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		inspector(f, n)
	}
}

func inspector(f *jen.File, n names) {
	e := n.e
	ctx := func() *jen.Statement { return jen.Id("ctx").Qual("context", "Context") }
	guardParams := func() *jen.Statement {
		return jen.Params(ctx(), jen.Id("subscriber").String(), jen.Id("key").Add(n.key()))
	}
	var guards string
	switch {
	case e.Version != nil && e.HasStateGuard():
		guards = ", and the version and state its guards store for a key"
	case e.Version != nil:
		guards = ", and the version its guard stores for a key"
	case e.HasStateGuard():
		guards = ", and the state its guard stores for a key"
	}
	var version, state jen.Code
	if e.Version != nil {
		version = jen.Id("d").Dot("Version")
	}
	if e.HasStateGuard() {
		state = jen.Func().Add(guardParams()).Params(jen.String(), jen.Error()).Block(
			jen.List(jen.Id("state"), jen.Err()).Op(":=").Id("d").Dot("State").Call(jen.Id("ctx"), jen.Id("subscriber"), jen.Id("key")),
			jen.Return(jen.String().Call(jen.Id("state")), jen.Err()),
		)
	}
	Doc(f, 0, "%s returns the operator's view of the dispatcher, for "+
		"github.com/ordergen/ordergen/runtime/console: each subscriber's counters, "+
		"largest backlogs, stuck and parked keys, and its parked events a page at a "+
		"time, with keys as text and events as %s's JSON%s. Its Replay and Discard act "+
		"on one subscriber.", n.Inspector, n.Codec, guards)
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id(n.Inspector).Params().Qual(InspectPath, "Inspector").Block(
		jen.Return(jen.Qual(InspectPath, "Engines").Types(n.key(), jen.Id(n.Event)).Add(Keyed(
			Field{"Name", jen.Lit(e.Name)},
			Field{"Engines", jen.Id("d").Dot("topic").Dot("Subscribers")},
			Field{"Codec", jen.Id(n.Codec).Values()},
			Field{"Version", version},
			Field{"State", state},
		))),
	)
}
