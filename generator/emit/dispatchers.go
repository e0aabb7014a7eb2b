package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

func dispatchers(f *jen.File, pkg *ir.Package) {
	handshake(f)
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		entity(f, pkg.Name, n)
		config(f, n)
		dispatcher(f, n)
		subscriberNames(f, n)
	}
}

// handshake emits the compile-time check that the runtime runs code of
// the version the generator writes: genimpl.GenVersion against MinVersion
// and MaxVersion (runtime/genimpl/version.go).
func handshake(f *jen.File) {
	Doc(f, 0, "The handshake with the runtime: this code needs version %d of "+
		"github.com/ordergen/ordergen/runtime/genimpl. A build error on the first line "+
		"below (UpgradeOrdergen...) means that the github.com/ordergen/ordergen module in "+
		"go.mod is older than the ordergen that generated the code: upgrade it (go get "+
		"github.com/ordergen/ordergen@latest). On the second (Regenerate...), the code is "+
		"older than the module runs: generate it again with the module's ordergen (go "+
		"generate ./...).", genimpl.GenVersion)
	f.Const().Defs(
		jen.Id("_").Op("=").Add(gi("MaxVersion")).Op("-").Lit(genimpl.GenVersion),
		jen.Id("_").Op("=").Lit(genimpl.GenVersion).Op("-").Add(gi("MinVersion")),
	)
}

func config(f *jen.File, n names) {
	Doc(f, 0, "%s configures one subscriber of %s %s: %s and Subscribe start from the "+
		"schema's policies (%s.Defaults) and apply the options in order. A zero or nil "+
		"field means the runtime's default. Its fields are genimpl.Config's.", n.Config, Article(n.Dispatcher), n.Dispatcher, n.NewDispatcher, n.Entity)
	f.Type().Id(n.Config).Op("=").Add(gi("Config")).Types(n.key(), jen.Id(n.Event))
	Doc(f, 0, "%s changes %s %s before a subscriber starts.", n.Option, Article(n.Config), n.Config)
	f.Type().Id(n.Option).Op("=").Add(gi("Option")).Types(n.key(), jen.Id(n.Event))
}

func dispatcher(f *jen.File, n names) {
	e := n.e
	how := "the events of one key are handled one at a time in publication order"
	switch {
	case e.Batch:
		how = "the events of one key are handled in batches, one batch at a time, in publication order"
	case e.Notification:
		how = "the notifications of one key are handled one at a time, and those that " +
			"arrive while it is busy are coalesced into one call"
	}
	guards := ""
	if e.Version != nil || e.HasStateGuard() {
		guards = ", behind the schema's guards"
	}
	Doc(f, 0, "%s delivers %s events to per-key lanes: %s%s, events of different keys in "+
		"parallel. Each subscriber has its own lanes, guards and stores, so a slow or "+
		"parked subscriber delays no other. It is safe for concurrent use.\n\n"+
		"Besides the methods below, it has those of the genimpl.Dispatcher it embeds, "+
		"documented there: Publish (any %s event), Flush, Close, Replay, Discard, "+
		"ParkedKeys, ParkedEvents, Health, TopBacklog, Stuck, Stats and Inspector, and, "+
		"for transports, SubmitTagged, Withdraw and Subscriptions; their maps are keyed "+
		"by %s.", n.Dispatcher, e.Name, how, guards, e.Name, n.SubscriberName)
	f.Type().Id(n.Dispatcher).Struct(jen.Op("*").Id(n.Core))
	Doc(f, 0, "%s is the generic dispatcher that %s embeds.", n.Core, n.Dispatcher)
	f.Type().Id(n.Core).Op("=").Add(gi("Dispatcher")).Types(n.key(), jen.Id(n.Event), n.bodyType(), jen.Id(n.SubscriberName))

	Doc(f, 0, "%s returns a dispatcher whose first subscriber, named %q, is h, "+
		"configured with the schema's policies changed by opts. Close it when done.", n.NewDispatcher, e.Name)
	f.Func().Id(n.NewDispatcher).Params(jen.Id("h").Id(n.Handler), jen.Id("opts").Op("...").Id(n.Option)).Params(jen.Op("*").Id(n.Dispatcher), jen.Error()).Block(
		newCore(n, gi("New").Types(jen.Id(n.SubscriberName)).Call(jen.Id(n.Entity), jen.Id(n.HandlerAdapter).Call(jen.Id("h")), jen.Id("opts")))...,
	)
	Doc(f, 0, "Subscribe adds a subscriber: h receives every event published from now on, "+
		"in its own lanes, with its own guard stores. Its runtime name is %q "+
		"followed by name; names must be unique.", e.Name+"/")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Subscribe").Params(jen.Id("name").String(), jen.Id("h").Id(n.Handler), jen.Id("opts").Op("...").Id(n.Option)).Error().Block(
		jen.Return(gi("Subscribe").Call(jen.Id("d").Dot(n.Core), jen.Id("name"), jen.Id(n.HandlerAdapter).Call(jen.Id("h")), jen.Id("opts"))),
	)
	txConstructors(f, n)
	ctx := func() jen.Code { return jen.Id("ctx").Qual("context", "Context") }
	params := func() []jen.Code {
		return []jen.Code{ctx(), jen.Id("subscriber").Id(n.SubscriberName), jen.Id("key").Add(n.key())}
	}
	args := func() []jen.Code {
		return []jen.Code{jen.Id("ctx"), jen.Id("d").Dot(n.Core), jen.Id("subscriber"), jen.Id("key")}
	}
	if e.Version != nil {
		Doc(f, 0, "Version returns the last version of key that the subscriber named "+
			"subscriber (%s for the first one) applied, 0 when none yet, as its version "+
			"guard stores it.", n.FirstSubscriber)
		f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Version").Params(params()...).Params(jen.Uint64(), jen.Error()).Block(
			jen.Return(gi("Version").Call(args()...)),
		)
	}
	if e.HasStateGuard() {
		Doc(f, 0, "State returns the current state of key in the subscriber named "+
			"subscriber (%s for the first one), \"\" when no event set one yet, as its "+
			"state guard stores it.", n.FirstSubscriber)
		f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("State").Params(params()...).Params(jen.Id(n.State), jen.Error()).Block(
			jen.Return(gi("State").Types(jen.Id(n.State)).Call(args()...)),
		)
	}
}

// newCore returns the statements that return a dispatcher around what call
// returns (a *genimpl.Dispatcher and an error).
func newCore(n names, call jen.Code) []jen.Code {
	return []jen.Code{
		jen.List(jen.Id("d"), jen.Err()).Op(":=").Add(call),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Op("&").Id(n.Dispatcher).Values(jen.Id("d")), jen.Nil()),
	}
}

// subscriberNames emits the typed name of a subscriber: the type, the
// constant of the first subscriber and the function that names the
// others.
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
	Doc(f, 0, "%s is the subscriber that %s and %s start with: the handler given to "+
		"them.", n.FirstSubscriber, n.NewDispatcher, n.NewTxDispatcher)
	f.Const().Id(n.FirstSubscriber).Id(n.SubscriberName).Op("=").Lit(e.Name)
	Doc(f, 0, "%s returns the name of the subscriber that Subscribe(name, ...) or "+
		"SubscribeTx(name, ...) adds: %q followed by name.", n.SubscriberNamed, e.Name+"/")
	f.Func().Id(n.SubscriberNamed).Params(jen.Id("name").String()).Id(n.SubscriberName).Block(
		jen.Return(jen.Id(n.SubscriberName).Call(jen.Lit(e.Name + "/").Op("+").Id("name"))),
	)
}

// handlerAdapter emits the function that adapts the entity's handler (its
// transactional handler, with tx) to genimpl's Handler (TxHandler): the
// type switch that calls the method of each event, the batch method, the
// resync. A nil handler gives nil.
func handlerAdapter(f *jen.File, n names, tx bool) {
	e := n.e
	name, iface, typ := n.HandlerAdapter, n.Handler, "Handler"
	var txParam, txArg []jen.Code
	if tx {
		name, iface, typ = n.TxHandlerAdapter, n.TxHandler, "TxHandler"
		txParam, txArg = []jen.Code{jen.Id("tx").Add(sqlTx())}, []jen.Code{jen.Id("tx")}
	}
	adapted := gi(typ).Types(n.key(), jen.Id(n.Event), n.bodyType())
	params := func(rest ...jen.Code) []jen.Code {
		return append(append([]jen.Code{jen.Id("ctx").Qual("context", "Context")}, txParam...), rest...)
	}
	callArgs := func(rest ...jen.Code) []jen.Code {
		return append(append([]jen.Code{jen.Id("ctx")}, txArg...), rest...)
	}
	var fields []jen.Code
	switch {
	case e.Batch:
		fields = append(fields, jen.Id("Batch").Op(":").Id("h").Dot(n.HandleBatch))
	case e.Notification:
		fields = append(fields, jen.Id("Call").Op(":").Func().Params(params(jen.Id("key").Add(n.key()), jen.Id("_").Add(n.bodyType()))...).Error().Block(
			jen.Return(jen.Id("h").Dot(n.HandleChanged).Call(callArgs(jen.Id("key"))...)),
		))
	default:
		call := func(ev *ir.Event) jen.Code {
			arg := jen.Id("v").Dot(ev.Name)
			if !n.byValue() {
				arg = jen.Id("v").Dot("Event").Assert(jen.Id(ev.Name))
			}
			return jen.Return(jen.Id("h").Dot(ev.Handle).Call(callArgs(arg)...))
		}
		var block []jen.Code
		if len(e.Events) == 1 && n.byValue() {
			block = []jen.Code{call(e.Events[0])}
		} else {
			kind := jen.Id("v").Dot("kind")
			if !n.byValue() {
				kind = jen.Id("v").Dot("Kind")
			}
			block = []jen.Code{jen.Switch(kind).BlockFunc(func(g *jen.Group) {
				for i, ev := range e.Events {
					g.Case(jen.Lit(i)).Block(call(ev))
				}
			}), jen.Return(gi("ErrUnknownEvent"))}
		}
		fields = append(fields, jen.Id("Call").Op(":").Func().Params(params(jen.Id("_").Add(n.key()), jen.Id("v").Add(n.bodyType()))...).Error().Block(block...))
	}
	if e.Resync {
		state := jen.Lit("")
		if e.HasStateGuard() {
			state = jen.String().Call(jen.Id("s").Dot("State"))
		}
		fields = append(fields, jen.Id("Resync").Op(":").Func().Params(params(jen.Id("key").Add(n.key()))...).Params(jen.Uint64(), jen.String(), jen.Error()).Block(
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Id("h").Dot(n.Resync).Call(callArgs(jen.Id("key"))...),
			jen.Return(jen.Id("s").Dot("Version"), state, jen.Err()),
		))
	}
	Doc(f, 0, "%s adapts h to the generic guards of runtime/genimpl; nil for a nil h.", name)
	f.Func().Id(name).Params(jen.Id("h").Id(iface)).Op("*").Add(adapted).Block(
		jen.Return(gi("Adapt").Call(jen.Id("h"), jen.Op("&").Add(adapted).Add(lines(fields...)))),
	)
}
