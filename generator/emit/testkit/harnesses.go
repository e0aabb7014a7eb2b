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
	d := jen.Op("*").Add(k.gen(n.Dispatcher))

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
	emit.Doc(f, 0, "%s delivers %s events through a real %s.%s: its lanes, %s "+
		"Its methods (Deliver, ApplyInOrder, Dispatcher, Close) are delivery.Harness's.",
		n.Harness, e.Name, k.pkg.Name, n.Dispatcher, guards)
	f.Type().Id(n.Harness).Op("=").Qual(DeliveryPath, "Harness").Types(k.keyType(e), k.gen(n.Event), d.Clone())
	f.Line()

	emit.Doc(f, 0, "%s starts a dispatcher for handler, configured with the schema's "+
		"policies changed by opts, except that a full backlog blocks the harness "+
		"(runtime.Block), so that every delivery is accepted. Its OnSkip also records "+
		"the guards' skips for the reports (an OnSkip of opts is still told). Close it "+
		"when done.", n.NewHarness)
	var guard []emit.Field
	switch {
	case e.Version != nil:
		var resyncs jen.Code
		if e.Resync {
			resyncs = jen.True()
		}
		guard = []emit.Field{{Name: "Versioned", Value: jen.True()}, {Name: "Resyncs", Value: resyncs}}
	case e.Notification:
		guard = []emit.Field{{Name: "Unordered", Value: jen.True()}}
	}
	var snapshot jen.Code
	if e.Version != nil && e.HasSnapshot() {
		snapshot = jen.Id(n.Snapshot)
	}
	spec := jen.Qual(DeliveryPath, "HarnessSpec").Types(k.keyType(e), k.gen(n.Event), d.Clone()).Add(emit.Keyed(
		emit.Field{Name: "Kit", Value: jen.Lit(k.name)},
		emit.Field{Name: "Entity", Value: jen.Lit(e.Name)},
		emit.Field{Name: "Guard", Value: jen.Qual(DeliveryPath, "Guard").Add(emit.Keyed(guard...))},
		emit.Field{Name: "Snapshot", Value: snapshot},
		emit.Field{Name: "Stats", Value: jen.Func().Params(jen.Id("d").Add(d.Clone())).Qual(emit.RuntimePath, "Stats").Block(
			jen.Return(jen.Id("d").Dot("Stats").Call().Index(k.gen(n.FirstSubscriber))),
		)},
	))
	f.Func().Id(n.NewHarness).Params(jen.Id("handler").Add(k.gen(n.Handler)), jen.Id("opts").Op("...").Add(k.gen(n.Option))).Params(jen.Op("*").Id(n.Harness), jen.Error()).Block(
		jen.Return(jen.Qual(DeliveryPath, "NewHarness").Call(spec, jen.Func().Params(jen.Id("o").Add(k.gen(n.Option))).Params(d.Clone(), jen.Error()).Block(
			jen.Return(k.gen(n.NewDispatcher).Call(jen.Id("handler"), jen.Append(jen.Qual("slices", "Clip").Call(jen.Id("opts")), jen.Id("o")).Op("..."))),
		))),
	)
}

func (k kit) inOrder(f *jen.File, n names) {
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
	).Error().Block(
		jen.List(jen.Id("hs"), jen.Err()).Op(":=").Id(n.NewHarness).Call(jen.Id("h"), jen.Id("opts").Op("...")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("hs").Dot("ApplyInOrderAndClose").Call(jen.Id("ctx"), jen.Id("events"))),
	)
}

// guarded reports whether e has guards (a version or states) whose skips
// the kit records.
func guarded(e *ir.Entity) bool { return e.Version != nil || e.HasStateGuard() }

// sequence emits SequenceX, which numbers the versions of a stream.
func (k kit) sequence(f *jen.File, n names) {
	e := n.e
	f.Line()
	emit.Doc(f, 0, "%s returns copies of events with their %s set to 1, 2, 3 and "+
		"on for each key, in the order given: the versions the single writer of "+
		"each %s gives. Pointers become values; nil events are left out.", n.Sequence, e.Version.Name, e.Name)
	f.Func().Id(n.Sequence).Params(jen.Id("events").Op("...").Add(k.gen(n.Event))).Index().Add(k.gen(n.Event)).Block(
		jen.Return(jen.Qual(DeliveryPath, "Sequence").Types(k.keyType(e), k.gen(n.Event)).Call(jen.Lit(e.Version.Name), jen.Id("events"))),
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
