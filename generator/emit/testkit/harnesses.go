package testkit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/ir"
)

func (k kit) keyType(e *ir.Entity) jen.Code { return emit.Type(e.Key.Type) }

func (k kit) harnesses(f *jen.File) {
	for _, e := range k.pkg.Entities {
		n := namesOf(e)
		k.harness(f, n)
		k.inOrder(f, n)
		k.value(f, n)
		if e.Version != nil {
			k.sequence(f, n)
			if e.HasSnapshot() {
				k.snapshot(f, n)
			}
		}
	}
}

func (k kit) harness(f *jen.File, n names) {
	e := n.e
	ctx := jen.Id("ctx").Qual("context", "Context")
	events := jen.Index().Add(k.gen(n.Event))
	errf := func(format string, args ...jen.Code) *jen.Statement {
		return jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(k.name + ": " + format)}, args...)...)
	}

	emit.Doc(f, 0, "%s is the report of a delivery: what was sent, in order, and the "+
		"counters of the harness's %s subscriber afterwards.", n.Delivery, e.Name)
	f.Type().Id(n.Delivery).Op("=").Qual(DeliveryPath, "Report").Types(k.gen(n.Event))
	f.Line()

	var guards string
	switch {
	case e.Version != nil:
		guards = "its version guard and resequencer, and its state guard, in the order a " +
			"Chaos plan gives. The version guard skips duplicates and stale " +
			"redeliveries and the resequencer holds early events until their gap " +
			"fills, so every Chaos within the resequencer's bound (MaxHeld) reaches " +
			"the state that in-order application reaches."
		if e.Resync {
			guards += " A lost event (Chaos.Losses) holds its key's later events until " +
				"the bound is hit; the handler's " + n.Resync + " then brings the key " +
				"up to date from the source of truth, and the state reached is the " +
				"source's."
		}
	case e.Notification:
		guards = "in the order a Chaos plan gives. The entity's events are notifications, " +
			"whose order does not matter: the harness takes reorderings (but not gaps, " +
			"which need a version), and the notifications of a key that arrive while its " +
			"handler is busy make one call."
	case e.HasStateGuard():
		guards = "and its state guard, in the order a Chaos plan gives. The entity has no " +
			"version: the harness refuses reorderings and gaps; the state guard skips " +
			"duplicated and late transitions, and every other duplicate or " +
			"redelivery reaches the handler again."
	default:
		guards = "in the order a Chaos plan gives. The entity has no version and no " +
			"states: the harness refuses reorderings and gaps, and every duplicate and " +
			"redelivery reaches the handler again."
	}
	emit.Doc(f, 0, "%s delivers %s events through a real %s.%s: its lanes, %s", n.Harness, e.Name, k.pkg.Name, n.Dispatcher, guards)
	f.Type().Id(n.Harness).Struct(
		jen.Id("d").Op("*").Add(k.gen(n.Dispatcher)),
		jen.Id("guard").Qual(DeliveryPath, "Guard"),
		jen.Id("skips").Qual(DeliveryPath, "Skips").Types(k.gen(n.Event)).Comment("what the guards skipped, told by OnSkip"),
	)
	f.Line()

	told := ""
	if guarded(e) {
		told = " Its OnSkip also records the guards' skips for the reports (an OnSkip of " +
			"opts is still told)."
	}
	emit.Doc(f, 0, "%s starts a dispatcher for handler, configured with the schema's "+
		"policies changed by opts, except that a full backlog blocks the harness "+
		"(runtime.Block), so that every delivery is accepted.%s Close it when done.", n.NewHarness, told)
	capture := []jen.Code{
		jen.Id("c").Dot("Backlog").Dot("WhenFull").Op("=").Qual(emit.RuntimePath, "Block"),
	}
	if guarded(e) {
		capture = append(capture,
			jen.Id("told").Op(":=").Id("c").Dot("OnSkip"),
			jen.Id("c").Dot("OnSkip").Op("=").Func().Params(jen.Id("key").Add(k.keyType(e)), jen.Id("ev").Add(k.gen(n.Event)), jen.Id("reason").String()).Block(
				jen.Id("h").Dot("skips").Dot("Add").Call(jen.Id("ev"), jen.Id("reason")),
				jen.If(jen.Id("told").Op("!=").Nil()).Block(jen.Id("told").Call(jen.Id("key"), jen.Id("ev"), jen.Id("reason"))),
			),
		)
	}
	if e.Version != nil {
		capture = append(capture, jen.Id("h").Dot("guard").Dot("MaxHeld").Op("=").Id("c").Dot("MaxHeld"))
	}
	guard := jen.Qual(DeliveryPath, "Guard").Values()
	if e.Notification {
		guard = jen.Qual(DeliveryPath, "Guard").Add(emit.Keyed(emit.Field{Name: "Unordered", Value: jen.True()}))
	}
	if e.Version != nil {
		var resyncs jen.Code
		if e.Resync {
			resyncs = jen.True()
		}
		guard = jen.Qual(DeliveryPath, "Guard").Add(emit.Keyed(emit.Field{Name: "Versioned", Value: jen.True()}, emit.Field{Name: "Resyncs", Value: resyncs}))
	}
	f.Func().Id("New"+n.Harness).Params(jen.Id("handler").Add(k.gen(n.Handler)), jen.Id("opts").Op("...").Add(k.gen(n.Option))).Params(jen.Op("*").Id(n.Harness), jen.Error()).Block(
		jen.Id("h").Op(":=").Op("&").Id(n.Harness).Add(emit.Keyed(emit.Field{Name: "guard", Value: guard})),
		jen.Id("opts").Op("=").Append(
			jen.Qual("slices", "Clip").Call(jen.Id("opts")),
			jen.Func().Params(jen.Id("c").Op("*").Add(k.gen(n.Config))).Block(capture...),
		),
		jen.List(jen.Id("d"), jen.Err()).Op(":=").Add(k.gen(n.NewDispatcher)).Call(jen.Id("handler"), jen.Id("opts").Op("...")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), errf("new "+n.Harness+": %w", jen.Err()))),
		jen.Id("h").Dot("d").Op("=").Id("d"),
		jen.Return(jen.Id("h"), jen.Nil()),
	)
	f.Line()

	emit.Doc(f, 0, "Dispatcher returns the harness's dispatcher, for its Stats, ParkedKeys, "+
		"Replay and the rest.")
	f.Func().Params(jen.Id("h").Op("*").Id(n.Harness)).Id("Dispatcher").Params().Op("*").Add(k.gen(n.Dispatcher)).Block(jen.Return(jen.Id("h").Dot("d")))
	f.Line()

	emit.Doc(f, 0, "Deliver plans a delivery of events, given in publication order, with c, "+
		"publishes it from the calling goroutine, and waits until every event has "+
		"an outcome (or is parked). The same events and c always give the same "+
		"delivery. Pointers to events are delivered as the events they point to. "+
		"The report holds what was sent, the subscriber's Stats and what the guards "+
		"skipped. It returns an error wrapping ErrUnrepairable for a Chaos the entity's "+
		"guards cannot repair, and an error for a nil event or a failed publish.")
	snapshot := jen.Nil()
	if e.Version != nil && e.HasSnapshot() {
		snapshot = jen.Id(n.Snapshot)
	}
	fail := func(err jen.Code) jen.Code {
		return jen.Return(jen.Id(n.Delivery).Values(), err)
	}
	f.Func().Params(jen.Id("h").Op("*").Id(n.Harness)).Id("Deliver").Params(ctx, jen.Id("events").Add(events.Clone()), jen.Id("c").Id("Chaos")).Params(jen.Id(n.Delivery), jen.Error()).Block(
		jen.Id("values").Op(":=").Make(events.Clone(), jen.Len(jen.Id("events"))),
		jen.For(jen.List(jen.Id("i"), jen.Id("e")).Op(":=").Range().Id("events")).Block(
			jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id(n.Value).Call(jen.Id("e")),
			jen.If(jen.Op("!").Id("ok")).Block(fail(errf("deliver "+e.Name+" events: event %d is nil", jen.Id("i")))),
			jen.Id("values").Index(jen.Id("i")).Op("=").Id("v"),
		),
		jen.List(jen.Id("plan"), jen.Err()).Op(":=").Qual(DeliveryPath, "Plan").Call(
			jen.Id("values"), k.gen(n.Event).Dot("EventKey"), snapshot, jen.Id("h").Dot("guard"), jen.Id("c"),
		),
		jen.If(jen.Err().Op("!=").Nil()).Block(fail(errf("deliver "+e.Name+" events: %w", jen.Err()))),
		jen.Id("h").Dot("skips").Dot("Take").Call().Comment("an earlier delivery's"),
		jen.If(jen.Err().Op(":=").Qual(DeliveryPath, "Run").Call(jen.Id("ctx"), jen.Id("plan"), jen.Id("h").Dot("d").Dot("Publish"), jen.Id("h").Dot("d").Dot("Flush")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Id(n.Delivery).Add(emit.Keyed(emit.Field{Name: "Sent", Value: jen.Id("plan")})), errf("deliver "+e.Name+" events with %v: %w", jen.Id("c"), jen.Err())),
		),
		jen.Return(jen.Id(n.Delivery).Add(emit.Keyed(
			emit.Field{Name: "Sent", Value: jen.Id("plan")},
			emit.Field{Name: "Stats", Value: jen.Id("h").Dot("d").Dot("Stats").Call().Index(k.gen(n.FirstSubscriber))},
			emit.Field{Name: "Skips", Value: jen.Id("h").Dot("skips").Dot("Take").Call()},
		)), jen.Nil()),
	)
	f.Line()

	k.applyInOrder(f, n)
	f.Line()

	emit.Doc(f, 0, "Close closes the harness's dispatcher (see its Close).")
	f.Func().Params(jen.Id("h").Op("*").Id(n.Harness)).Id("Close").Params(ctx.Clone()).Error().Block(
		jen.Return(jen.Id("h").Dot("d").Dot("Close").Call(jen.Id("ctx"))),
	)
}

func (k kit) inOrder(f *jen.File, n names) {
	e := n.e
	f.Line()
	emit.Doc(f, 0, "%s delivers events to h once each, in publication order, "+
		"through a new dispatcher with opts: the in-order application that a "+
		"delivery by %s %s with any Chaos it accepts must reach as well. It "+
		"returns when every event has an outcome, and closes the dispatcher. It "+
		"fails, with an error wrapping ErrSkippedInOrder, when the guards skip any "+
		"of the events (see %s.ApplyInOrder, which can allow skips by their reasons).", n.ApplyInOrder, emit.Article(n.Harness), n.Harness, n.Harness)
	f.Func().Id(n.ApplyInOrder).Params(
		jen.Id("ctx").Qual("context", "Context"),
		jen.Id("h").Add(k.gen(n.Handler)),
		jen.Id("events").Index().Add(k.gen(n.Event)),
		jen.Id("opts").Op("...").Add(k.gen(n.Option)),
	).Params(jen.Err().Error()).Block(
		jen.List(jen.Id("hs"), jen.Err()).Op(":=").Id("New"+n.Harness).Call(jen.Id("h"), jen.Id("opts").Op("...")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Defer().Func().Params().Block(
			jen.Err().Op("=").Qual("errors", "Join").Call(jen.Err(), jen.Id("hs").Dot("Close").Call(jen.Id("ctx"))),
		).Call(),
		jen.List(jen.Id("_"), jen.Err()).Op("=").Id("hs").Dot("ApplyInOrder").Call(jen.Id("ctx"), jen.Id("events")),
		jen.Return(jen.Err()),
	)
	_ = e
}

// applyInOrder emits the harness's ApplyInOrder: a delivery in order
// that fails when the guards skip an event, but for allowed reasons.
func (k kit) applyInOrder(f *jen.File, n names) {
	e := n.e
	guards := "The entity has no guards, so nothing is skipped and allow does not matter."
	if guarded(e) {
		guards = "In publication order a skip is almost always a schema mistake (an event " +
			"that happens within a state moving to it with to: instead of taking in:), and a " +
			"delivery with any Chaos goes through the same guards, skips the same event and so " +
			"agrees with it: the in-order run is the oracle, so it catches the mistake here. " +
			"A test names the reasons of the skips it means in allow (" + allowExample(e) + ")."
	}
	emit.Doc(f, 0, "ApplyInOrder delivers events once each, in publication order (Deliver "+
		"with the zero Chaos), and fails with an error wrapping ErrSkippedInOrder, which "+
		"names each event with its key%s and the guard's reason, when the guards skip any "+
		"of them but for a reason in allow. %s", versionWord(e), guards)
	format := "%s (key %#v)"
	args := []jen.Code{jen.Id("e").Dot("EventName").Call(), jen.Id("e").Dot("EventKey").Call()}
	if e.Version != nil {
		format = "%s (key %#v, version %d)"
		args = append(args, jen.Id("e").Dot("EventVersion").Call())
	}
	f.Func().Params(jen.Id("h").Op("*").Id(n.Harness)).Id("ApplyInOrder").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("events").Index().Add(k.gen(n.Event)), jen.Id("allow").Op("...").String(),
	).Params(jen.Id(n.Delivery), jen.Error()).Block(
		jen.List(jen.Id("report"), jen.Err()).Op(":=").Id("h").Dot("Deliver").Call(jen.Id("ctx"), jen.Id("events"), jen.Id("Chaos").Values()),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("report"), jen.Err())),
		jen.Id("describe").Op(":=").Func().Params(jen.Id("e").Add(k.gen(n.Event))).String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(append([]jen.Code{jen.Lit(format)}, args...)...)),
		),
		jen.If(jen.Err().Op(":=").Qual(DeliveryPath, "InOrder").Call(jen.Id("report").Dot("Skips"), jen.Id("allow"), jen.Id("describe")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Id("report"), jen.Qual("fmt", "Errorf").Call(jen.Lit(k.name+": apply "+e.Name+" events in order: %w"), jen.Err())),
		),
		jen.Return(jen.Id("report"), jen.Nil()),
	)
}

// guarded reports whether e has guards (a version or states) whose skips
// the kit records.
func guarded(e *ir.Entity) bool { return e.Version != nil || e.HasStateGuard() }

// versionWord is ", version" for an entity with a version.
func versionWord(e *ir.Entity) string {
	if e.Version != nil {
		return ", version"
	}
	return ""
}

// allowExample describes a skip that a test may mean, with its reason: for
// an entity without a version, a repeated move to a state; with states, a
// late transition; otherwise a repeated version.
func allowExample(e *ir.Entity) string {
	switch {
	case e.Version == nil:
		return "a repeated event of an entity without a version: \"duplicate: already in state " + e.StateNames()[0] + "\""
	case len(e.States) > 1:
		return "a late event published on purpose: \"late transition: state " + e.States[0] + " ranks below " + e.States[1] + "\""
	}
	return "a repeated version published on purpose: \"duplicate or stale version\""
}

// value emits the function that turns an event (or a pointer to one) into
// the event's value.
func (k kit) value(f *jen.File, n names) {
	f.Line()
	emit.Doc(f, 0, "%s returns e as a value, dereferencing a pointer; false for nil.", n.Value)
	f.Func().Id(n.Value).Params(jen.Id("e").Add(k.gen(n.Event))).Params(k.gen(n.Event), jen.Bool()).Block(
		jen.Switch(jen.Id("e").Op(":=").Id("e").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			for _, ev := range n.e.Events {
				g.Case(k.gen(ev.Name)).Block(jen.Return(jen.Id("e"), jen.True()))
				g.Case(jen.Op("*").Add(k.gen(ev.Name))).Block(
					jen.If(jen.Id("e").Op("!=").Nil()).Block(jen.Return(jen.Op("*").Id("e"), jen.True())),
				)
			}
		}),
		jen.Return(jen.Nil(), jen.False()),
	)
}

// sequence emits SequenceX, which numbers the versions of a stream.
func (k kit) sequence(f *jen.File, n names) {
	e := n.e
	events := jen.Index().Add(k.gen(n.Event))
	version := jen.Id("next").Index(jen.Id("key"))
	if t := e.Version.Type; t.Name != "uint64" {
		version = jen.Id(t.Name).Call(version) // versions are integer builtins
	}
	f.Line()
	emit.Doc(f, 0, "%s returns copies of events with their %s set to 1, 2, 3 and "+
		"on for each key, in the order given: the versions the single writer of "+
		"each %s gives. Pointers become values; nil events are left out.", n.Sequence, e.Version.Name, e.Name)
	f.Func().Id(n.Sequence).Params(jen.Id("events").Op("...").Add(k.gen(n.Event))).Add(events.Clone()).Block(
		jen.Id("next").Op(":=").Make(jen.Map(k.keyType(e)).Uint64()),
		jen.Id("out").Op(":=").Make(events.Clone(), jen.Lit(0), jen.Len(jen.Id("events"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("events")).Block(
			jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id(n.Value).Call(jen.Id("e")),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Continue()),
			jen.Id("key").Op(":=").Id("v").Dot("EventKey").Call(),
			jen.Id("next").Index(jen.Id("key")).Op("++"),
			jen.Switch(jen.Id("v").Op(":=").Id("v").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
				for _, ev := range e.Events {
					g.Case(k.gen(ev.Name)).Block(
						jen.Id("v").Dot(e.Version.Name).Op("=").Add(version.Clone()),
						jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("v")),
					)
				}
			}),
		),
		jen.Return(jen.Id("out")),
	)
}

// snapshot emits the function that tells the snapshot events.
func (k kit) snapshot(f *jen.File, n names) {
	var cases []jen.Code
	for _, ev := range n.e.Events {
		if ev.Snapshot {
			cases = append(cases, k.gen(ev.Name))
		}
	}
	f.Line()
	emit.Doc(f, 0, "%s reports whether e carries the full state of its %s (a "+
		"snapshot, which the version guard applies across a gap).", n.Snapshot, n.e.Name)
	f.Func().Id(n.Snapshot).Params(jen.Id("e").Add(k.gen(n.Event))).Bool().Block(
		jen.Switch(jen.Id("e").Assert(jen.Type())).Block(
			jen.Case(cases...).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.False()),
	)
}
