package emit

import (
	"reflect"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func dispatchers(f *jen.File, pkg *ir.Package) {
	Doc(f, 0, "This line fails to compile when the runtime package is older or newer than "+
		"the ordergen that generated this file. Regenerate with the ordergen of the "+
		"github.com/ordergen/ordergen version in your go.mod (go generate ./...), or "+
		"update that module (go get github.com/ordergen/ordergen@latest).")
	f.Const().Id("_").Op("=").Add(rt("SupportPackageIsVersion3"))
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		value(f, n)
		config(f, n)
		dispatcher(f, n)
		subscriberNames(f, n)
		operations(f, n)
	}
}

// value emits the function that gives the value the runtime carries for an
// event: the event itself, a pointer's event, nil for nil. The runtime
// carries each event as its interface value, which holds that event's
// struct and no other: a queued event costs its own size however many
// events the entity has (one allocation per publish, to box it).
func value(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns e as a value of its event type, dereferencing a pointer; "+
		"nil for a nil e or a nil pointer.", n.Value)
	f.Func().Id(n.Value).Params(jen.Id("e").Id(n.Event)).Id(n.Event).Block(
		jen.Switch(jen.Id("e").Op(":=").Id("e").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				g.Case(jen.Op("*").Id(ev.Name)).Block(
					jen.If(jen.Id("e").Op("==").Nil()).Block(jen.Return(jen.Nil())),
					jen.Return(jen.Op("*").Id("e")),
				)
			}
		}),
		jen.Return(jen.Id("e")),
	)
}

func config(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s configures one subscriber of %s %s. %s and Subscribe "+
		"start from the schema's policies and apply the options in order. A zero or "+
		"nil field means the runtime's default.", n.Config, Article(n.Dispatcher), n.Dispatcher, n.NewDispatcher)
	f.Type().Id(n.Config).StructFunc(func(g *jen.Group) {
		for _, pf := range e.PolicyFields() {
			Doc(g, 1, "%s", pf.Doc)
			g.Id(pf.Name).Add(goType(reflect.TypeOf(pf.Value)))
		}
		if grouped(e) {
			Doc(g, 1, "Group configures the group commit of a transactional subscriber "+
				"(%s, SubscribeTx; schema: group): a groupcommit.Committer commits the "+
				"work of many keys in one transaction, up to MaxEvents events, after "+
				"waiting up to Linger for more keys. Name, MeterProvider and "+
				"Logger default to the subscriber's; the subscriber's metric attributes "+
				"come before MetricAttributes. Other subscribers ignore it.", n.NewTxDispatcher)
			g.Id("Group").Add(gc("Config"))
		}
		Doc(g, 1, "Logger receives what an operator must see (a key parked, a replay). "+
			"Nil: slog.Default().")
		g.Id("Logger").Op("*").Qual("log/slog", "Logger")
		Doc(g, 1, "MeterProvider, when set, receives the subscriber's metrics (see the "+
			"runtime's Metric constants), with the entity as "+
			"messaging.destination.name and the subscriber's name as "+
			"messaging.consumer.group.name; for OpenTelemetry, wrap yours with "+
			"github.com/ordergen/ordergen/runtime/otelmetrics.NewMeterProvider. "+
			"Nil: nothing is recorded.")
		g.Id("MeterProvider").Add(mt("Provider"))
		if e.Version != nil {
			Doc(g, 1, "Versions stores the last applied version of each %s. Nil: a new "+
				"in-memory store. Give each subscriber its own store.", e.Name)
			g.Id("Versions").Add(rt("VersionStore")).Types(n.key())
		}
		if e.HasStateGuard() {
			Doc(g, 1, "States stores the current state of each %s. Nil: a new in-memory "+
				"store. Give each subscriber its own store.", e.Name)
			g.Id("States").Add(rt("StateStore")).Types(n.key())
		}
		Doc(g, 1, "Parks stores the parked events. Nil: the runtime's in-memory store.")
		g.Id("Parks").Add(rt("ParkStore")).Types(n.key(), jen.Id(n.Event))
		Doc(g, 1, "DeadLetter receives the events that failed for good under the "+
			"runtime.SendToDeadLetter policy; that policy requires it.")
		g.Id("DeadLetter").Add(rt("DeadLetterSink")).Types(n.key(), jen.Id(n.Event))
		Doc(g, 1, "Store, when set, keeps the subscriber's versions, states and parked "+
			"events durably (runtime/sqlstore), in the namespace of the subscriber's "+
			"name (%q, %q); Versions, States and Parks set here win "+
			"over it. %s and SubscribeTx set it to their store.", e.Name, e.Name+"/name", n.NewTxDispatcher)
		g.Id("Store").Add(du("Store"))
		Doc(g, 1, "OnOutcome, when set, is told the outcome of each event the subscriber "+
			"accepted, with the tag given to SubmitTagged (0 for Publish). A transport "+
			"that feeds the dispatcher (the Kafka consumer of runtime/kafka) sets it on "+
			"every subscriber to learn when its records are finished; SubmitTagged "+
			"refuses to run while a subscriber has none. It must be fast and must not "+
			"block (see runtime.OutcomeFunc).")
		g.Id("OnOutcome").Add(rt("OutcomeFunc")).Types(n.key())
		if guarded(e) {
			Doc(g, 1, "OnSkip, when set, is told each event the subscriber's guards skip, "+
				"with the guard's reason: %s. An unimplemented event's acknowledgement is "+
				"not a guard's skip. It is told when the guards decide, so an attempt that "+
				"runs again (a failed batch, a group's work, a failed commit) may tell it "+
				"again. The test kit's in-order run sets it, to fail on an event skipped in "+
				"publication order (almost always a schema mistake). It is called from the "+
				"subscriber's workers: it must be fast and must not block.", skipKinds(e))
			g.Id("OnSkip").Add(onSkipType(n))
		}
	})
	Doc(f, 0, "%s changes %s %s before a subscriber starts.", n.Option, Article(n.Config), n.Config)
	f.Type().Id(n.Option).Func().Params(jen.Op("*").Id(n.Config))

	var defaults []Field
	for _, pf := range e.PolicyFields() {
		defaults = append(defaults, Field{pf.Name, policyValue(reflect.ValueOf(pf.Value))})
	}
	if grouped(e) {
		gp := e.Policy.Group
		var linger jen.Code
		if gp.Linger > 0 {
			linger = duration(gp.Linger)
		}
		var maxEvents jen.Code
		if gp.MaxEvents > 0 {
			maxEvents = jen.Lit(gp.MaxEvents)
		}
		defaults = append(defaults, Field{"Group", gc("Config").Add(Keyed(Field{"MaxEvents", maxEvents}, Field{"Linger", linger}))})
	}
	Doc(f, 0, "%s returns the schema's policies for %s.", n.DefaultConfig, e.Name)
	f.Func().Id(n.DefaultConfig).Params().Id(n.Config).Block(jen.Return(jen.Id(n.Config).Add(Keyed(defaults...))))
}

// skipKinds lists what the guards of e skip, for the comments.
func skipKinds(e *ir.Entity) string {
	var kinds []string
	if e.Version != nil {
		kinds = append(kinds, "a duplicate or stale version")
	}
	if e.HasStateGuard() {
		kinds = append(kinds, "a late transition")
		if e.Version == nil {
			kinds = append(kinds, "a move to the current state (a duplicate, without a version)")
		}
		if len(e.Branches) > 0 {
			kinds = append(kinds, "a branch state entered from a state it does not list")
		}
		if e.HasWithin() {
			kinds = append(kinds, "an event outside the states its in: lists")
		}
	}
	return list(kinds, "or")
}
