package emit

import (
	"github.com/dave/jennifer/jen"
)

// subscriberNames emits the typed name of a subscriber: the type, the
// constant of the first subscriber, the function that names the others,
// the helper that keys the runtime's maps by it, and the dispatcher's error
// for a name that names none.
func subscriberNames(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s names a subscriber of %s %s: %s for the subscriber that %s "+
		"starts with, %s(name) for the one that Subscribe(name, ...) adds. Version, "+
		"State and ParkedEvents take it, and Stats, ParkedKeys, TopBacklog and Stuck "+
		"are keyed by it, so that a subscriber is named by a constant the compiler "+
		"checks rather than by a string variable (a string literal still converts to "+
		"it: a name that names no subscriber is an error that says which one it "+
		"likely meant). It is also the subscriber's namespace in a durable store, "+
		"as ordergen-parked shows it.",
		n.SubscriberName, Article(n.Dispatcher), n.Dispatcher, n.FirstSubscriber, n.NewDispatcher, n.SubscriberNamed)
	f.Type().Id(n.SubscriberName).String()
	f.Line()
	Doc(f, 0, "%s is the subscriber that %s and %s start with: the handler given to "+
		"them.", n.FirstSubscriber, n.NewDispatcher, n.NewTxDispatcher)
	f.Const().Id(n.FirstSubscriber).Id(n.SubscriberName).Op("=").Lit(e.Name)
	f.Line()
	Doc(f, 0, "%s returns the name of the subscriber that Subscribe(name, ...) or "+
		"SubscribeTx(name, ...) adds: %q followed by name.", n.SubscriberNamed, e.Name+"/")
	f.Func().Id(n.SubscriberNamed).Params(jen.Id("name").String()).Id(n.SubscriberName).Block(
		jen.Return(jen.Id(n.SubscriberName).Call(jen.Lit(e.Name + "/").Op("+").Id("name"))),
	)
	f.Line()
	Doc(f, 0, "%s returns m, a map of the runtime's by subscriber name, keyed by %s.", n.BySubscriber, n.SubscriberName)
	f.Func().Id(n.BySubscriber).Types(jen.Id("V").Any()).Params(jen.Id("m").Map(jen.String()).Id("V")).Map(jen.Id(n.SubscriberName)).Id("V").Block(
		jen.Id("out").Op(":=").Make(jen.Map(jen.Id(n.SubscriberName)).Id("V"), jen.Len(jen.Id("m"))),
		jen.For(jen.List(jen.Id("name"), jen.Id("v")).Op(":=").Range().Id("m")).Block(
			jen.Id("out").Index(jen.Id(n.SubscriberName).Call(jen.Id("name"))).Op("=").Id("v"),
		),
		jen.Return(jen.Id("out")),
	)
	f.Line()
	Doc(f, 0, "unknownSubscriber returns the error for a name that names no subscriber of d: "+
		"with the subscriber whose name differs from it only in case, or else with "+
		"every subscriber's name.")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("unknownSubscriber").Params(jen.Id("name").Id(n.SubscriberName)).Error().Block(
		jen.Id("d").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("d").Dot("mu").Dot("Unlock").Call(),
		jen.Id("names").Op(":=").Make(jen.Index().String(), jen.Lit(0), jen.Len(jen.Id("d").Dot("subs"))),
		jen.For(jen.Id("known").Op(":=").Range().Id("d").Dot("subs")).Block(
			jen.If(jen.Qual("strings", "EqualFold").Call(jen.Id("known"), jen.String().Call(jen.Id("name")))).Block(
				jen.Return(errorf(n.pkg()+": no subscriber named %q (did you mean %s?)", jen.Id("name"), jen.Id("known"))),
			),
			jen.Id("names").Op("=").Append(jen.Id("names"), jen.Id("known")),
		),
		jen.Qual("slices", "Sort").Call(jen.Id("names")),
		jen.Return(errorf(n.pkg()+": no subscriber named %q (subscribers: %s)", jen.Id("name"), jen.Qual("strings", "Join").Call(jen.Id("names"), jen.Lit(", ")))),
	)
}
