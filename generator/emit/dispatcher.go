package emit

import (
	"reflect"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/runtime"
)

func errorf(format string, args ...jen.Code) *jen.Statement {
	return jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(format)}, args...)...)
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
	Doc(f, 0, "%s delivers %s events to per-key lanes: %s, events of different keys in "+
		"parallel. Each subscriber has its own lanes, guards and stores, so a slow or "+
		"parked subscriber delays no other. It is safe for concurrent use.", n.Dispatcher, e.Name, how)
	f.Type().Id(n.Dispatcher).Struct(
		jen.Id("topic").Op("*").Add(rt("Topic")).Types(n.key(), jen.Id(n.Event)),
		jen.Id("mu").Qual("sync", "Mutex").Comment("serialises subscribe (a name is taken once) and guards subs"),
		jen.Id("subs").Map(jen.String()).Op("*").Id(n.Subscriber).Comment("by name"),
	)
	Doc(f, 0, "%s is one subscriber of %s %s: its name, its handler and the "+
		"stores of its guards.", n.Subscriber, Article(n.Dispatcher), n.Dispatcher)
	f.Type().Id(n.Subscriber).StructFunc(func(g *jen.Group) {
		g.Id("name").String()
		g.Id("h").Id(n.Handler)
		g.Id("tx").Op("*").Id(n.TxBinding)
		if e.Version != nil {
			g.Id("versions").Add(rt("VersionStore")).Types(n.key())
		}
		if e.HasStateGuard() {
			g.Id("states").Add(rt("StateStore")).Types(n.key())
		}
		if grouped(e) {
			g.Id("group").Add(committer()).Comment("a transactional subscriber's, nil for the others")
		}
		if guarded(e) {
			g.Id("onSkip").Add(onSkipType(n)).Comment("the config's OnSkip")
		}
		if logsDuplicates(e) {
			g.Id("log").Op("*").Qual("log/slog", "Logger").Comment("the config's Logger")
			g.Id("duplicateLogged").Qual("sync/atomic", "Bool").Comment("set by the first skip of a move to the current state")
		}
	})

	Doc(f, 0, "%s returns a dispatcher whose first subscriber, named %q, is h, "+
		"configured with the schema's policies changed by opts. Close it when done.", n.NewDispatcher, e.Name)
	f.Func().Id(n.NewDispatcher).Params(jen.Id("h").Id(n.Handler), jen.Id("opts").Op("...").Id(n.Option)).Params(jen.Op("*").Id(n.Dispatcher), jen.Error()).Block(
		jen.Id("d").Op(":=").Op("&").Id(n.Dispatcher).Add(Keyed(Field{"topic", rt("NewTopic").Types(n.key(), jen.Id(n.Event)).Call()})),
		jen.If(jen.Err().Op(":=").Id("d").Dot("subscribe").Call(jen.Lit(e.Name), jen.Id("h"), jen.Nil(), jen.Id("opts")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Err()),
		),
		jen.Return(jen.Id("d"), jen.Nil()),
	)

	Doc(f, 0, "Subscribe adds a subscriber: h receives every event published from now on, "+
		"in its own lanes, with its own guard stores. Its runtime name is %q "+
		"followed by name; names must be unique.", e.Name+"/")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Subscribe").Params(jen.Id("name").String(), jen.Id("h").Id(n.Handler), jen.Id("opts").Op("...").Id(n.Option)).Error().Block(
		jen.If(jen.Id("name").Op("==").Lit("")).Block(jen.Return(errorf(n.pkg()+": subscribe to "+e.Name+": empty subscriber name"))),
		jen.Return(jen.Id("d").Dot("subscribe").Call(jen.Lit(e.Name+"/").Op("+").Id("name"), jen.Id("h"), jen.Nil(), jen.Id("opts"))),
	)

	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("subscribe").Params(jen.Id("name").String(), jen.Id("h").Id(n.Handler), jen.Id("tx").Op("*").Id(n.TxBinding), jen.Id("opts").Index().Id(n.Option)).Error().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("h").Op("==").Nil().Op("&&").Id("tx").Op("==").Nil()).Block(jen.Return(errorf(n.pkg()+": subscribe %s: nil handler", jen.Id("name"))))
		g.Id("d").Dot("mu").Dot("Lock").Call()
		g.Defer().Id("d").Dot("mu").Dot("Unlock").Call()
		g.If(jen.List(jen.Id("_"), jen.Id("taken")).Op(":=").Id("d").Dot("topic").Dot("Subscriber").Call(jen.Id("name")), jen.Id("taken")).Block(
			jen.Return(errorf(n.pkg()+": subscribe %s: the name is taken", jen.Id("name"))),
		)
		g.Id("cfg").Op(":=").Id(n.DefaultConfig).Call()
		g.For(jen.List(jen.Id("_"), jen.Id("opt")).Op(":=").Range().Id("opts")).Block(
			jen.If(jen.Id("opt").Op("!=").Nil()).Block(jen.Id("opt").Call(jen.Op("&").Id("cfg"))),
		)
		g.Id(n.UseStore).Call(jen.Op("&").Id("cfg"), jen.Id("name"), jen.Id("tx"))
		// The fields of the subscriber, in declaration order.
		sub := []Field{{"name", jen.Id("name")}, {"h", jen.Id("h")}, {"tx", jen.Id("tx")}}
		if e.Version != nil {
			sub = append(sub, Field{"versions", jen.Id("cfg").Dot("Versions")})
		}
		if e.HasStateGuard() {
			sub = append(sub, Field{"states", jen.Id("cfg").Dot("States")})
		}
		if guarded(e) {
			sub = append(sub, Field{"onSkip", jen.Id("cfg").Dot("OnSkip")})
		}
		if logsDuplicates(e) {
			sub = append(sub, Field{"log", jen.Id("cfg").Dot("Logger")})
		}
		g.Id("s").Op(":=").Op("&").Id(n.Subscriber).Add(Keyed(sub...))
		if e.Version != nil {
			g.If(jen.Id("s").Dot("versions").Op("==").Nil()).Block(
				jen.Id("s").Dot("versions").Op("=").Add(rt("NewMemoryVersionStore")).Types(n.key()).Call(),
			)
		}
		if e.HasStateGuard() {
			g.If(jen.Id("s").Dot("states").Op("==").Nil()).Block(
				jen.Id("s").Dot("states").Op("=").Add(rt("NewMemoryStateStore")).Types(n.key()).Call(),
			)
		}
		attribute := func(key string, value jen.Code) jen.Code {
			return Keyed(Field{"Key", mt(key)}, Field{"Value", value})
		}
		attributes := func() jen.Code {
			return jen.Index().Add(mt("Attribute")).Values(
				attribute("AttrDestination", jen.Lit(e.Name)),
				attribute("AttrConsumerGroup", jen.Id("name")),
			)
		}
		if grouped(e) {
			newCommitter(g, n, attributes())
		}
		rc := []Field{
			{"Name", jen.Id("name")},
			{"Logger", jen.Id("cfg").Dot("Logger")},
			{"MeterProvider", jen.Id("cfg").Dot("MeterProvider")},
			{"MetricAttributes", attributes()},
			{"OnOutcome", jen.Id("cfg").Dot("OnOutcome")},
			{"Parks", jen.Id("cfg").Dot("Parks")},
			{"DeadLetter", jen.Id("cfg").Dot("DeadLetter")},
		}
		if e.Conflate {
			rc = append(rc, Field{"Conflate", jen.True()})
		}
		if e.Resync {
			rc = append(rc, Field{"Resync", jen.Id("s").Dot("resyncer").Call()})
		}
		for _, pf := range e.PolicyFields() {
			rc = append(rc, Field{pf.Name, jen.Id("cfg").Dot(pf.Name)})
		}
		configType := reflect.TypeFor[runtime.Config[string, struct{}]]()
		g.Id("rc").Op(":=").Add(rt("Config")).Types(n.key(), jen.Id(n.Event)).Add(Keyed(Ordered(configType, rc...)...))
		subscribe := "Subscribe"
		if e.Batch {
			subscribe = "SubscribeBatch"
		}
		if grouped(e) {
			subscribeGroup(g, n, subscribe)
		} else {
			g.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("d").Dot("topic").Dot(subscribe).Call(jen.Id("s").Dot("engineHandler").Call(), jen.Id("rc")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(errorf(n.pkg()+": subscribe %s: %w", jen.Id("name"), jen.Err())),
			)
		}
		g.If(jen.Id("d").Dot("subs").Op("==").Nil()).Block(
			jen.Id("d").Dot("subs").Op("=").Make(jen.Map(jen.String()).Op("*").Id(n.Subscriber)),
		)
		g.Id("d").Dot("subs").Index(jen.Id("name")).Op("=").Id("s")
		g.Return(jen.Nil())
	})

}

// guarded reports whether e's subscribers have guards (a version or
// states), whose skips they report to OnSkip.
func guarded(e *ir.Entity) bool { return e.Version != nil || e.HasStateGuard() }

// logsDuplicates reports whether e's state guard skips a move to the
// current state as a duplicate (it has states and no version), and logs
// the first one.
func logsDuplicates(e *ir.Entity) bool { return e.Version == nil && e.HasStateGuard() }

// onSkipType is the type of a subscriber's OnSkip.
func onSkipType(n names) *jen.Statement {
	return jen.Func().Params(jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event), jen.Id("reason").String())
}
