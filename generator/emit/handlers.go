package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func handlers(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		if e.Resync {
			sourceState(f, n)
		}
		article := capitalize(Article(n.Dispatcher))
		var text string
		switch {
		case e.Notification:
			text = fmt.Sprintf("%s handles the events of entity %s, which are notifications: an "+
				"event says only that its key changed, and %s %s coalesces the "+
				"notifications of a key that arrive while its handler is busy into one "+
				"call. The method fetches the key's current state from its owner.", n.Handler, e.Name, Article(n.Dispatcher), n.Dispatcher)
		case e.Batch:
			text = fmt.Sprintf("%s handles the events of entity %s in batches: %s %s calls "+
				"its method with the pending events of one %s, in publication order, "+
				"after the generated guards let them through; the batches of one key run "+
				"one at a time, in order.", n.Handler, e.Name, article, n.Dispatcher, e.Name)
		default:
			text = fmt.Sprintf("%s handles the events of entity %s, one typed method per event. "+
				"%s %s calls the methods of one %s in publication order, one event "+
				"at a time, after the generated guards let the event through.", n.Handler, e.Name, article, n.Dispatcher, e.Name)
		}
		Doc(f, 0, "%s A method that returns an error is retried in place; wrap the error "+
			"with runtime.Permanent to apply the exhaustion policy at once.", text)
		f.Type().Id(n.Handler).InterfaceFunc(func(g *jen.Group) { handlerMethods(g, n, nil) })
		unimplementedBase(f, n, n.Handler, n.UnimplementedHandler, nil)
		handlerAdapter(f, n, false)
	}
}

// sourceState emits the type a resync returns: a key's version and state
// as the source of truth has them.
func sourceState(f *jen.File, n names) {
	e := n.e
	what := "version of %s %s as its source of truth has it"
	if e.HasStateGuard() {
		what = "version and state of %s %s as its source of truth has them"
	}
	Doc(f, 0, "%s is the current "+what+": what %s returns when the resequencer "+
		"bound of a key is hit.", n.SourceState, Article(e.Name), e.Name, n.Resync)
	f.Type().Id(n.SourceState).StructFunc(func(g *jen.Group) {
		Doc(g, 1, "Version is the key's version at the source: the guards store it, skip "+
			"the held events up to it and apply the ones after it in order.")
		g.Id("Version").Uint64()
		if e.HasStateGuard() {
			Doc(g, 1, "State is the key's state at the source (\"\" for none), which the "+
				"state guard stores.")
			g.Id("State").Id(n.State)
		}
	})
}

// handlerMethods emits the methods of e's handler interface, with the
// parameters in extra between the context and the rest (the transaction
// of a transactional handler).
func handlerMethods(g *jen.Group, n names, extra []jen.Code) {
	e := n.e
	in := ""
	if len(extra) > 0 {
		in = " in tx"
	}
	params := func(rest ...jen.Code) []jen.Code {
		p := append([]jen.Code{jen.Id("ctx").Qual("context", "Context")}, extra...)
		return append(p, rest...)
	}
	switch {
	case e.Notification:
		Doc(g, 1, "%s is called%s when the %s of key changed: fetch its current state "+
			"from its owner. The notifications of key that arrived while it was busy "+
			"make one call.", n.HandleChanged, in, e.Name)
		g.Id(n.HandleChanged).Params(params(jen.Id("key").Add(n.key()))...).Error()
	case e.Batch:
		guards := ""
		if e.Version != nil {
			guards = " A duplicate or stale event is left out, and so is an event held back " +
				"on a version gap (it comes in a later batch, once the gap fills): the " +
				"versions of one call follow each other"
			if e.HasStateGuard() {
				guards += ", but for the events the state guard skips (late transitions" + withinSkips(e) + ")"
			}
			guards += "."
		} else if e.HasStateGuard() {
			guards = " An event the state guard skips (a late transition, a move to the current " +
				"state" + withinSkips(e) + ") is left out."
		}
		Doc(g, 1, "%s handles%s a batch of events of the %s of key, in publication "+
			"order: up to the configured BatchSize pending events, gathered for up "+
			"to its Linger.%s Return nil when every event is applied; an error fails "+
			"the whole batch.", n.HandleBatch, in, e.Name, guards)
		g.Id(n.HandleBatch).Params(params(jen.Id("key").Add(n.key()), jen.Id("events").Index().Id(n.Event))...).Error()
	default:
		for _, ev := range e.Events {
			Doc(g, 1, "%s handles %s %s event%s.", ev.Handle, Article(ev.Name), ev.Name, in)
			g.Id(ev.Handle).Params(params(jen.Id("e").Id(ev.Name))...).Error()
		}
	}
	if e.Resync {
		Doc(g, 1, "%s is called%s when the resequencer bound of key is hit (an event "+
			"is missing and the gap did not fill in time): bring the handler's data "+
			"of key up to date from the source of truth and return the version%s it "+
			"reached. The held events up to that version are then skipped, and the "+
			"later ones applied in order. An error is retried with the retry policy; "+
			"when the attempts run out, or at once for runtime.Permanent, the key is "+
			"parked.", n.Resync, in, map[bool]string{true: " and state", false: ""}[e.HasStateGuard()])
		g.Id(n.Resync).Params(params(jen.Id("key").Add(n.key()))...).Params(jen.Id(n.SourceState), jen.Error())
	}
}

// unimplementedBase emits base, the embeddable base of the handler
// interface iface: its methods return runtime.ErrUnimplemented. extra are
// the parameters between the context and the rest (the transaction).
func unimplementedBase(f *jen.File, n names, iface, base string, extra []jen.Code) {
	e := n.e
	what := "implements no event"
	acknowledged := "An event that reaches one of its methods is acknowledged, not " +
		"applied: the guards still advance the key's version and state, so no gap " +
		"is left behind, and the event is counted as skipped with the reason " +
		"\"unimplemented\" (Stats.Unimplemented)."
	switch {
	case e.Notification:
		what = "implements nothing"
		acknowledged = "A notification that reaches it is acknowledged and counted as " +
			"skipped with the reason \"unimplemented\" (Stats.Unimplemented)."
	case e.Batch:
		what = "implements nothing"
		acknowledged = "A batch that reaches it is acknowledged, not applied: the guards " +
			"still advance the key's version and state, so no gap is left behind, and " +
			"its events are counted as skipped with the reason \"unimplemented\" " +
			"(Stats.Unimplemented)."
	}
	if e.Resync {
		acknowledged += " Its " + n.Resync + " fails permanently: a key whose " +
			"resequencer bound is hit is parked, as without a resync."
	}
	Doc(f, 0, "%s is %s %s that %s: embed it in your "+
		"handler so that it keeps compiling when the schema gains events, as "+
		"gRPC's Unimplemented servers do. Without it, a new event breaks every "+
		"handler at compile time, which is the safe default. %s", base, Article(iface), iface, what, acknowledged)
	f.Type().Id(base).Struct()
	f.Var().Id("_").Id(iface).Op("=").Id(base).Values()
	params := func(rest ...jen.Code) []jen.Code {
		p := append([]jen.Code{jen.Qual("context", "Context")}, extra...)
		return append(p, rest...)
	}
	unimplementedErr := jen.Return(rt("ErrUnimplemented"))
	switch {
	case e.Notification:
		Doc(f, 0, "%s returns runtime.ErrUnimplemented.", n.HandleChanged)
		f.Func().Params(jen.Id(base)).Id(n.HandleChanged).Params(params(n.key())...).Error().Block(unimplementedErr)
	case e.Batch:
		Doc(f, 0, "%s returns runtime.ErrUnimplemented.", n.HandleBatch)
		f.Func().Params(jen.Id(base)).Id(n.HandleBatch).Params(params(n.key(), jen.Index().Id(n.Event))...).Error().Block(unimplementedErr)
	default:
		for _, ev := range e.Events {
			Doc(f, 0, "%s returns runtime.ErrUnimplemented.", ev.Handle)
			f.Func().Params(jen.Id(base)).Id(ev.Handle).Params(params(jen.Id(ev.Name))...).Error().Block(unimplementedErr)
		}
	}
	if e.Resync {
		Doc(f, 0, "%s returns runtime.ErrUnimplemented: the key is parked.", n.Resync)
		f.Func().Params(jen.Id(base)).Id(n.Resync).Params(params(n.key())...).Params(jen.Id(n.SourceState), jen.Error()).Block(
			jen.Return(jen.Id(n.SourceState).Values(), rt("ErrUnimplemented")),
		)
	}
}

// withinSkips names, after others, the events the state guard of e skips
// for their in: ("" when no event of e has one).
func withinSkips(e *ir.Entity) string {
	if !e.HasWithin() {
		return ""
	}
	return ", events outside the states of their in:"
}
