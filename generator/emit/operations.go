package emit

import (
	"github.com/dave/jennifer/jen"
)

// operations emits the dispatcher's operator methods. Each delegates to the
// runtime's Topic, which asks every subscriber; the dispatcher only adds its
// package's name to errors.
func operations(f *jen.File, n names) {
	e := n.e
	recv := func() *jen.Statement { return jen.Params(jen.Id("d").Op("*").Id(n.Dispatcher)) }
	ctx := jen.Id("ctx").Qual("context", "Context")
	key := jen.Id("key").Add(n.key())
	topic := func(method string, args ...jen.Code) *jen.Statement {
		return jen.Id("d").Dot("topic").Dot(method).Call(args...)
	}
	// wrap is "if err != nil { return zeros..., fmt.Errorf("pkg: %w", err) }".
	wrap := func(zeros ...jen.Code) *jen.Statement {
		return jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Return(append(zeros, errorf(n.pkg()+": %w", jen.Err()))...),
		)
	}
	// ifErr is "if err := call; err != nil { return fmt.Errorf("pkg: %w", err) }".
	ifErr := func(call *jen.Statement) *jen.Statement {
		return jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(
			jen.Return(errorf(n.pkg()+": %w", jen.Err())),
		)
	}
	ctxArg, keyArg := jen.Id("ctx"), jen.Id("key")

	Doc(f, 0, "Flush waits until every event published before the call has an outcome, or "+
		"is held back on a version gap or parked, in every subscriber, or until ctx "+
		"ends.")
	f.Func().Add(recv()).Id("Flush").Params(ctx).Error().Block(
		ifErr(topic("Flush", ctxArg)),
		jen.Return(jen.Nil()),
	)

	if grouped(e) {
		closeGroups(f, n)
	} else {
		Doc(f, 0, "Close stops accepting events, drains every subscriber and stops their "+
			"workers. It returns an error when ctx ends before everything finished.")
		f.Func().Add(recv()).Id("Close").Params(ctx).Error().Block(
			jen.Return(topic("Close", ctxArg)),
		)
	}

	Doc(f, 0, "Replay re-runs, in order, the parked events of key in every subscriber where "+
		"key is parked, and unparks it where all succeed. It returns an error wrapping "+
		"runtime.ErrNotParked when key is parked nowhere.")
	f.Func().Add(recv()).Id("Replay").Params(ctx, key).Error().Block(
		ifErr(topic("Replay", ctxArg, keyArg)),
		jen.Return(jen.Nil()),
	)

	Doc(f, 0, "Discard removes the parked events of key in every subscriber where key is "+
		"parked (their outcome: runtime.Discarded), unparks it, and returns how many "+
		"events it removed. It returns an error wrapping runtime.ErrNotParked when key "+
		"is parked nowhere.")
	f.Func().Add(recv()).Id("Discard").Params(ctx, key).Params(jen.Int(), jen.Error()).Block(
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(topic("Discard", ctxArg, keyArg)),
		wrap(jen.Id("n")),
		jen.Return(jen.Id("n"), jen.Nil()),
	)

	Doc(f, 0, "CancelAttempt ends, in every subscriber where a handler of key is in an "+
		"attempt, that attempt's context with cause (nil: runtime.ErrOperatorCancel), "+
		"which the handler sees as context.Cause(ctx); the retry policy, then the park, "+
		"follow. It returns an error wrapping runtime.ErrNotRunning when no attempt of "+
		"key runs anywhere.")
	f.Func().Add(recv()).Id("CancelAttempt").Params(key, jen.Id("cause").Error()).Error().Block(
		ifErr(topic("CancelAttempt", keyArg, jen.Id("cause"))),
		jen.Return(jen.Nil()),
	)

	Doc(f, 0, "ParkNow parks key now with its pending events, in order, under reason "+
		"(empty: \"parked by an operator\"), in every subscriber where it has any, and "+
		"returns how many events it parked. A handler of key in an attempt is withdrawn: "+
		"its event parks first, and what it returns is ignored (see runtime.Engine.ParkNow). "+
		"It returns an error wrapping runtime.ErrNothingPending when key has no pending "+
		"event anywhere.")
	f.Func().Add(recv()).Id("ParkNow").Params(ctx, key, jen.Id("reason").String()).Params(jen.Int(), jen.Error()).Block(
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(topic("ParkNow", ctxArg, keyArg, jen.Id("reason"))),
		wrap(jen.Id("n")),
		jen.Return(jen.Id("n"), jen.Nil()),
	)

	byName := func(v jen.Code) *jen.Statement { return jen.Map(jen.Id(n.SubscriberName)).Add(v) }
	parkedKeys := byName(jen.Index().Add(rt("ParkedKey")).Types(n.key()))
	Doc(f, 0, "ParkedKeys returns the parked keys of every subscriber that has any, by "+
		"subscriber (%s, or %s(name) for the others).", n.FirstSubscriber, n.SubscriberNamed)
	f.Func().Add(recv()).Id("ParkedKeys").Params(ctx).Params(parkedKeys, jen.Error()).Block(
		jen.List(jen.Id("keys"), jen.Err()).Op(":=").Add(topic("ParkedKeys", ctxArg)),
		wrap(jen.Nil()),
		jen.Return(jen.Id(n.BySubscriber).Call(jen.Id("keys")), jen.Nil()),
	)

	parkedEvent := func() *jen.Statement { return rt("ParkedEvent").Types(jen.Id(n.Event)) }
	Doc(f, 0, "ParkedEvents returns, in order, the events parked for key in the subscriber "+
		"named subscriber (%s for the first one).", n.FirstSubscriber)
	f.Func().Add(recv()).Id("ParkedEvents").Params(ctx, jen.Id("subscriber").Id(n.SubscriberName), key).Params(jen.Index().Add(parkedEvent()), jen.Error()).Block(
		jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Add(topic("Subscriber", jen.String().Call(jen.Id("subscriber")))),
		jen.If(jen.Op("!").Id("ok")).Block(
			jen.Return(jen.Nil(), jen.Id("d").Dot("unknownSubscriber").Call(jen.Id("subscriber"))),
		),
		jen.List(jen.Id("events"), jen.Err()).Op(":=").Id("s").Dot("ParkedEvents").Call(ctxArg, keyArg),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), errorf(n.pkg()+": parked events of %v in %s: %w", keyArg, jen.Id("subscriber"), jen.Err())),
		),
		jen.Return(jen.Id("events"), jen.Nil()),
	)

	Doc(f, 0, "Health returns nil when no subscriber has a key whose oldest pending event "+
		"is older than age, and otherwise the subscribers' *runtime.StuckError "+
		"joined: a readiness probe or an alert can use it as it is.")
	f.Func().Add(recv()).Id("Health").Params(jen.Id("age").Qual("time", "Duration")).Error().Block(
		jen.Return(topic("Health", jen.Id("age"))),
	)

	backlog := func() *jen.Statement { return byName(jen.Index().Add(rt("KeyBacklog")).Types(n.key())) }
	Doc(f, 0, "TopBacklog returns, by subscriber, up to n keys with the largest "+
		"backlog in each subscriber that has any, with the age of their oldest "+
		"pending event: a rising age on steady traffic means a hot or stuck key.")
	f.Func().Add(recv()).Id("TopBacklog").Params(jen.Id("n").Int()).Add(backlog()).Block(
		jen.Return(jen.Id(n.BySubscriber).Call(topic("TopBacklog", jen.Id("n")))),
	)

	Doc(f, 0, "Stuck returns, by subscriber, the keys whose oldest pending event is "+
		"older than age, in each subscriber that has any (what Health reports).")
	f.Func().Add(recv()).Id("Stuck").Params(jen.Id("age").Qual("time", "Duration")).Add(backlog()).Block(
		jen.Return(jen.Id(n.BySubscriber).Call(topic("Stuck", jen.Id("age")))),
	)

	if e.Version != nil {
		Doc(f, 0, "Version returns the last version of key that the subscriber named "+
			"subscriber (%s for the first one) applied, 0 when none yet, as its "+
			"version guard stores it.", n.FirstSubscriber)
		f.Func().Add(recv()).Id("Version").Params(ctx, jen.Id("subscriber").Id(n.SubscriberName), key).Params(jen.Uint64(), jen.Error()).Block(
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Id("d").Dot("subscriber").Call(jen.Id("subscriber")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())),
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("s").Dot("versions").Dot("Version").Call(ctxArg, keyArg),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Lit(0), errorf(n.pkg()+": version of %v in %s: %w", keyArg, jen.Id("subscriber"), jen.Err())),
			),
			jen.Return(jen.Id("v"), jen.Nil()),
		)
	}

	if e.HasStateGuard() {
		Doc(f, 0, "State returns the current state of key in the subscriber named subscriber "+
			"(%s for the first one), \"\" when no event set one yet, as its state "+
			"guard stores it.", n.FirstSubscriber)
		f.Func().Add(recv()).Id("State").Params(ctx, jen.Id("subscriber").Id(n.SubscriberName), key).Params(jen.Id(n.State), jen.Error()).Block(
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Id("d").Dot("subscriber").Call(jen.Id("subscriber")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(""), jen.Err())),
			jen.List(jen.Id("state"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("State").Call(ctxArg, keyArg),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Lit(""), errorf(n.pkg()+": state of %v in %s: %w", keyArg, jen.Id("subscriber"), jen.Err())),
			),
			jen.Return(jen.Id(n.State).Call(jen.Id("state")), jen.Nil()),
		)
	}

	if e.Version != nil || e.HasStateGuard() {
		Doc(f, 0, "subscriber returns the subscriber named name.")
		f.Func().Add(recv()).Id("subscriber").Params(jen.Id("name").Id(n.SubscriberName)).Params(jen.Op("*").Id(n.Subscriber), jen.Error()).Block(
			jen.Id("d").Dot("mu").Dot("Lock").Call(),
			jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Id("d").Dot("subs").Index(jen.String().Call(jen.Id("name"))),
			jen.Id("d").Dot("mu").Dot("Unlock").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Id("d").Dot("unknownSubscriber").Call(jen.Id("name")))),
			jen.Return(jen.Id("s"), jen.Nil()),
		)
	}

	Doc(f, 0, "Stats returns a snapshot of the counters of each subscriber, by subscriber "+
		"(%s, or %s(name) for the others). Every subscriber sees every published "+
		"event, so counters are per subscriber; add them up only knowing that.", n.FirstSubscriber, n.SubscriberNamed)
	f.Func().Add(recv()).Id("Stats").Params().Add(byName(rt("Stats"))).Block(
		jen.Return(jen.Id(n.BySubscriber).Call(topic("Stats"))),
	)
}
