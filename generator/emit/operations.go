package emit

import (
	"github.com/dave/jennifer/jen"
)

func operations(f *jen.File, n names) {
	e := n.e
	recv := func() *jen.Statement { return jen.Params(jen.Id("d").Op("*").Id(n.Dispatcher)) }
	ctx := jen.Id("ctx").Qual("context", "Context")
	key := jen.Id("key").Add(n.key())
	each := jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Id("d").Dot("subscribers").Call())

	f.Comment("Flush waits until every event published before the call has an outcome, or")
	f.Comment("is held back on a version gap or parked, in every subscriber, or until ctx")
	f.Comment("ends.")
	f.Func().Add(recv()).Id("Flush").Params(ctx).Error().Block(
		each.Clone().Block(
			jen.If(jen.Err().Op(":=").Id("s").Dot("engine").Dot("Flush").Call(jen.Id("ctx")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(errorf(n.pkg()+": flush %s: %w", jen.Id("s").Dot("name"), jen.Err())),
			),
		),
		jen.Return(jen.Nil()),
	)

	f.Comment("Close stops accepting events, drains every subscriber and stops their")
	f.Comment("workers. It returns an error when ctx ends before everything finished.")
	f.Func().Add(recv()).Id("Close").Params(ctx).Error().Block(
		jen.Return(jen.Id("d").Dot("topic").Dot("Close").Call(jen.Id("ctx"))),
	)

	f.Comment("Replay re-runs, in order, the parked events of key in every subscriber where")
	f.Comment("key is parked, and unparks it where all succeed. It returns an error wrapping")
	f.Comment("runtime.ErrNotParked when key is parked nowhere.")
	f.Func().Add(recv()).Id("Replay").Params(ctx, key).Error().Block(
		jen.Var().Id("errs").Index().Error(),
		jen.Id("parked").Op(":=").False(),
		each.Clone().Block(
			jen.Err().Op(":=").Id("s").Dot("engine").Dot("Replay").Call(jen.Id("ctx"), jen.Id("key")),
			jen.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrNotParked"))).Block(jen.Continue()),
			jen.Id("parked").Op("=").True(),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Id("errs").Op("=").Append(jen.Id("errs"), errorf(n.pkg()+": replay %v in %s: %w", jen.Id("key"), jen.Id("s").Dot("name"), jen.Err())),
			),
		),
		jen.If(jen.Op("!").Id("parked")).Block(jen.Return(errorf(n.pkg()+": replay "+e.Name+" %v: %w", jen.Id("key"), rt("ErrNotParked")))),
		jen.Return(jen.Qual("errors", "Join").Call(jen.Id("errs").Op("..."))),
	)

	f.Comment("Discard drops the parked events of key in every subscriber where key is")
	f.Comment("parked, unparks it, and returns how many events were dropped. It returns an")
	f.Comment("error wrapping runtime.ErrNotParked when key is parked nowhere.")
	f.Func().Add(recv()).Id("Discard").Params(ctx, key).Params(jen.Int(), jen.Error()).Block(
		jen.Var().Id("errs").Index().Error(),
		jen.Id("parked").Op(":=").False(),
		jen.Id("total").Op(":=").Lit(0),
		each.Clone().Block(
			jen.List(jen.Id("n"), jen.Err()).Op(":=").Id("s").Dot("engine").Dot("Discard").Call(jen.Id("ctx"), jen.Id("key")),
			jen.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrNotParked"))).Block(jen.Continue()),
			jen.Id("parked").Op("=").True(),
			jen.Id("total").Op("+=").Id("n"),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Id("errs").Op("=").Append(jen.Id("errs"), errorf(n.pkg()+": discard %v in %s: %w", jen.Id("key"), jen.Id("s").Dot("name"), jen.Err())),
			),
		),
		jen.If(jen.Op("!").Id("parked")).Block(jen.Return(jen.Lit(0), errorf(n.pkg()+": discard "+e.Name+" %v: %w", jen.Id("key"), rt("ErrNotParked")))),
		jen.Return(jen.Id("total"), jen.Qual("errors", "Join").Call(jen.Id("errs").Op("..."))),
	)

	f.Comment("ParkedKeys returns the parked keys of every subscriber that has any, by")
	f.Commentf("subscriber name (%q for the first subscriber, %q for the others).", e.Name, e.Name+"/name")
	f.Func().Add(recv()).Id("ParkedKeys").Params(ctx).Params(jen.Map(jen.String()).Index().Add(rt("ParkedKey")).Types(n.key()), jen.Error()).Block(
		jen.Id("out").Op(":=").Make(jen.Map(jen.String()).Index().Add(rt("ParkedKey")).Types(n.key())),
		each.Clone().Block(
			jen.List(jen.Id("keys"), jen.Err()).Op(":=").Id("s").Dot("engine").Dot("ParkedKeys").Call(jen.Id("ctx")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), errorf(n.pkg()+": parked keys of %s: %w", jen.Id("s").Dot("name"), jen.Err()))),
			jen.If(jen.Len(jen.Id("keys")).Op(">").Lit(0)).Block(jen.Id("out").Index(jen.Id("s").Dot("name")).Op("=").Id("keys")),
		),
		jen.Return(jen.Id("out"), jen.Nil()),
	)

	f.Comment("ParkedEvents returns, in order, the events parked for key in the subscriber")
	f.Commentf("named subscriber (%q for the first one).", e.Name)
	f.Func().Add(recv()).Id("ParkedEvents").Params(ctx, jen.Id("subscriber").String(), key).Params(jen.Index().Add(rt("ParkedEvent")).Types(jen.Id(n.Event)), jen.Error()).Block(
		each.Clone().Block(
			jen.If(jen.Id("s").Dot("name").Op("!=").Id("subscriber")).Block(jen.Continue()),
			jen.List(jen.Id("events"), jen.Err()).Op(":=").Id("s").Dot("engine").Dot("ParkedEvents").Call(jen.Id("ctx"), jen.Id("key")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), errorf(n.pkg()+": parked events of %v in %s: %w", jen.Id("key"), jen.Id("s").Dot("name"), jen.Err()))),
			jen.Id("out").Op(":=").Make(jen.Index().Add(rt("ParkedEvent")).Types(jen.Id(n.Event)), jen.Len(jen.Id("events"))),
			jen.For(jen.List(jen.Id("i"), jen.Id("pe")).Op(":=").Range().Id("events")).Block(
				jen.Id("out").Index(jen.Id("i")).Op("=").Add(rt("ParkedEvent")).Types(jen.Id(n.Event)).Values(jen.Dict{
					jen.Id("Event"):    jen.Id("pe").Dot("Event").Dot("event").Call(),
					jen.Id("Err"):      jen.Id("pe").Dot("Err"),
					jen.Id("Attempts"): jen.Id("pe").Dot("Attempts"),
					jen.Id("At"):       jen.Id("pe").Dot("At"),
					jen.Id("Seq"):      jen.Id("pe").Dot("Seq"),
				}),
			),
			jen.Return(jen.Id("out"), jen.Nil()),
		),
		jen.Return(jen.Nil(), errorf(n.pkg()+": no subscriber named %q", jen.Id("subscriber"))),
	)

	f.Comment("Health returns nil when no subscriber has a key whose oldest pending event")
	f.Comment("is older than age, and otherwise the subscribers' *runtime.StuckError")
	f.Comment("joined: a readiness probe or an alert can use it as it is.")
	f.Func().Add(recv()).Id("Health").Params(jen.Id("age").Qual("time", "Duration")).Error().Block(
		jen.Var().Id("errs").Index().Error(),
		each.Clone().Block(
			jen.If(jen.Err().Op(":=").Id("s").Dot("engine").Dot("Health").Call(jen.Id("age")), jen.Err().Op("!=").Nil()).Block(
				jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Err()),
			),
		),
		jen.Return(jen.Qual("errors", "Join").Call(jen.Id("errs").Op("..."))),
	)

	f.Comment("Stats returns a snapshot of the counters of each subscriber, by subscriber")
	f.Comment("name. Every subscriber sees every published event, so counters are per")
	f.Comment("subscriber; add them up only knowing that.")
	f.Func().Add(recv()).Id("Stats").Params().Map(jen.String()).Add(rt("Stats")).Block(
		jen.Id("out").Op(":=").Make(jen.Map(jen.String()).Add(rt("Stats"))),
		each.Clone().Block(
			jen.Id("out").Index(jen.Id("s").Dot("name")).Op("=").Id("s").Dot("engine").Dot("Stats").Call(),
		),
		jen.Return(jen.Id("out")),
	)
}
