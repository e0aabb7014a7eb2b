package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// GroupCommitPath is the import path of runtime/groupcommit, which the
// transactional subscribers of an entity with group: commit through.
const GroupCommitPath = RuntimePath + "/groupcommit"

func gc(name string) *jen.Statement { return jen.Qual(GroupCommitPath, name) }

// grouped reports whether the transactional subscribers of e commit
// through a groupcommit.Committer (group:).
func grouped(e *ir.Entity) bool { return e.Policy.Group.On }

// committer is the type of a grouped subscriber's committer.
func committer() *jen.Statement { return jen.Op("*").Add(gc("Committer")).Types(sqlTx()) }

// workParams are the parameters of a groupcommit.Work.
func workParams() []jen.Code {
	return []jen.Code{jen.Id("ctx").Qual("context", "Context"), jen.Id("tx").Add(sqlTx()), jen.Id("read").Add(du("KeyState"))}
}

// workResults are the results of a groupcommit.Work.
func workResults() []jen.Code { return []jen.Code{gc("Result"), jen.Error()} }

// noResult is the Result of a work that failed.
func noResult() *jen.Statement { return gc("Result").Values() }

// handleGroup emits the engine's batch handler of a transactional
// subscriber of a grouped entity that is not batched (batched ones get
// theirs from handleBatch): the key's batch is one work of the committer,
// whose events applyGroup decides and applies one by one.
func handleGroup(f *jen.File, n names) {
	e := n.e
	if e.Notification {
		handleGroupNotification(f, n)
		return
	}
	applyGroup(f, n)
	guards := ""
	if e.Version != nil || e.HasStateGuard() {
		guards = " the guards decide each event in order, as handle does for one, against the " +
			"version and state the group read, and"
	}
	Doc(f, 0, "handleGroup is the engine's batch handler of a transactional %s subscriber, "+
		"whose schema asks for group commit (group:). It hands the key's batch to the "+
		"subscriber's groupcommit.Committer as one work, run in a transaction shared with "+
		"other keys' work:%s the handler is called for each event with the group's "+
		"transaction (applyGroup); the key's new version and state are written, and "+
		"everything committed, with the group. The engine learns each event's verdict "+
		"(runtime.Verdicts).\n\n"+
		"A handler's failure fails the key's work: nothing of it commits. The events before "+
		"the failing one then commit without it, in a work of their own, and the failing "+
		"one comes first in the key's next batch, where the engine retries it (or skips or "+
		"holds it, for a handler's Skip or Hold) as for one event: what a failure costs the "+
		"events before it is one more run.", e.Name, guards)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("handleGroup").Params(ctx, jen.Id("key").Add(n.key()), jen.Id("events").Index().Id(n.Event)).Error().BlockFunc(func(g *jen.Group) {
		g.Comment("failed is the event whose handler failed the work's last run, -1 for none:")
		g.Comment("the work runs on Do's goroutine, never twice at once.")
		g.Id("failed").Op(":=").Lit(-1)
		g.Id("work").Op(":=").Func().Params(jen.Id("events").Index().Id(n.Event)).Add(gc("Work")).Types(sqlTx()).Block(
			jen.Return(jen.Func().Params(workParams()...).Params(workResults()...).Block(
				jen.Id("failed").Op("=").Lit(-1),
				jen.Id("at").Op(":=").Id("read"),
				jen.Id("verdicts").Op(":=").Make(jen.Index().Error(), jen.Lit(0), jen.Len(jen.Id("events"))),
				jen.For(jen.List(jen.Id("i"), jen.Id("ev")).Op(":=").Range().Id("events")).Block(
					jen.List(jen.Id("verdict"), jen.Err()).Op(":=").Id("s").Dot("applyGroup").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("key"), jen.Id("ev"), jen.Op("&").Id("at")),
					jen.If(jen.Err().Op("!=").Nil()).Block(
						jen.Id("failed").Op("=").Id("i"),
						jen.Return(noResult(), jen.Err()),
					),
					jen.Id("verdicts").Op("=").Append(jen.Id("verdicts"), jen.Id("verdict")),
				),
				jen.Return(gc("Result").Add(Keyed(Field{"Write", jen.Id("at")}, Field{"Verdict", rt("Verdicts").Call(jen.Id("verdicts"))})), jen.Nil()),
			)),
		)
		g.Err().Op(":=").Id("s").Dot("group").Dot("Do").Call(jen.Id("ctx"), keyText(n), jen.Len(jen.Id("events")), jen.Id("work").Call(jen.Id("events")))
		g.If(jen.Err().Op("==").Nil().Op("||").Id("ctx").Dot("Err").Call().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		g.If(jen.Id("failed").Op(">").Lit(0)).Block(
			jen.Comment("The events before the failing one commit without it."),
			jen.Return(jen.Id("s").Dot("group").Dot("Do").Call(jen.Id("ctx"), keyText(n), jen.Id("failed"), jen.Id("work").Call(jen.Id("events").Index(jen.Empty(), jen.Id("failed"))))),
		)
		g.Comment("A handler's Skip or Hold decides its event alone, as for one event.")
		g.List(jen.Id("_"), jen.Id("skip")).Op(":=").Add(rt("IsSkip")).Call(jen.Err())
		g.List(jen.Id("_"), jen.Id("hold")).Op(":=").Add(rt("IsHold")).Call(jen.Err())
		g.If(jen.Id("failed").Op("==").Lit(0).Op("&&").Parens(jen.Id("skip").Op("||").Id("hold"))).Block(
			jen.Return(rt("Verdicts").Call(jen.Index().Error().Values(jen.Err()))),
		)
		g.Return(jen.Err())
	})
}

// applyGroup emits the step of handleGroup's work: one event, decided by
// the guards against at and applied in tx.
func applyGroup(f *jen.File, n names) {
	e := n.e
	versioned := e.Version != nil
	snapshots := versioned && e.HasSnapshot()
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "
	what := "version and state"
	switch {
	case versioned && !stated:
		what = "version"
	case !versioned && stated:
		what = "state"
	}
	text := "applyGroup applies ev, an event of key, in tx, the transaction of the key's group, " +
		"from the key's " + what + " at. "
	if versioned || stated {
		text += "The guards decide first, as handle does: the verdict is a Skip or a Hold " +
			"when they do not let ev through. "
	}
	text += "Otherwise the handler is called with tx, and at advances to ev (also for " +
		"an event the handler does not implement, whose verdict is runtime.SkipApplied). " +
		"err is a failure of ev: the work fails."
	Doc(f, 0, "%s", text)
	ctx := jen.Id("ctx").Qual("context", "Context")
	unknown := jen.Return(jen.Nil(), rt("Permanent").Call(errorf(keyFmt+"unknown event %T", jen.Id("key"), jen.Id("ev"))))
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("applyGroup").Params(ctx, jen.Id("tx").Add(sqlTx()), jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event), jen.Id("at").Op("*").Add(du("KeyState"))).Params(jen.Id("verdict"), jen.Err().Error()).BlockFunc(func(g *jen.Group) {
		var deflt jen.Code
		if versioned || stated {
			guardFacts(g, n, snapshots, unknown)
		} else {
			deflt = unknown
		}
		if versioned {
			snapshot := jen.False()
			if snapshots {
				snapshot = jen.Id("snapshot")
			}
			g.If(jen.Id("v").Op(":=").Add(rt("CheckVersion")).Call(jen.Id("version"), jen.Id("at").Dot("Version"), snapshot), jen.Id("v").Op("!=").Nil()).Block(
				jen.Return(jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), jen.Id("v")), jen.Nil()),
			)
		}
		if stated {
			verdict := rt("Skip").Call(jen.Id("reason"))
			var skip []jen.Code
			if versioned {
				skip = append(skip, jen.Id("at").Dot("Version").Op("=").Id("version").Comment("a skipped event still uses up its version"))
				verdict = rt("SkipApplied").Call(jen.Id("reason"))
			}
			if d := logDuplicate(n); d != nil {
				skip = append(skip, d)
			}
			skip = append(skip, jen.Return(jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), verdict), jen.Nil()))
			g.If(readsState(e)).BlockFunc(func(g *jen.Group) {
				g.Id("current").Op(":=").Id(n.State).Call(jen.Id("at").Dot("State"))
				g.If(jen.Id(n.Rank).Call(jen.Id("current")).Op("==").Lit(-2)).Block(jen.Return(jen.Nil(), rt("Permanent").Call(
					errorf(keyFmt+"stored state %q is not a state of "+e.Name, jen.Id("key"), jen.Id("current")),
				)))
				stateReason(g, n)
				g.If(jen.Id("reason").Op("!=").Lit("")).Block(skip...)
			})
		}
		g.Add(dispatchSwitch(n, func(ev *ir.Event) jen.Code {
			return jen.Id("s").Dot("tx").Dot("h").Dot(ev.Handle).Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("e"))
		}, deflt))
		g.Id("unimplemented").Op(":=").Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))
		g.If(jen.Err().Op("!=").Nil().Op("&&").Op("!").Id("unimplemented")).Block(jen.Return(jen.Nil(), jen.Err()))
		if versioned {
			g.Id("at").Dot("Version").Op("=").Id("version")
		}
		if stated {
			g.If(jen.Id("target").Op("!=").Lit("")).Block(jen.Id("at").Dot("State").Op("=").String().Call(jen.Id("target")))
		}
		g.If(jen.Id("unimplemented")).Block(jen.Return(rt("SkipApplied").Call(rt("ReasonUnimplemented")), jen.Nil()))
		g.Return(jen.Nil(), jen.Nil())
	})
}

// handleGroupNotification emits handleGroup for a notification entity: one
// call of the handler for the key's batch of notifications, in the group's
// transaction.
func handleGroupNotification(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "handleGroup is the engine's batch handler of a transactional %s subscriber, "+
		"whose schema asks for group commit (group:). It hands the key's pending "+
		"notifications to the subscriber's groupcommit.Committer as one work, run in a "+
		"transaction shared with other keys' work: the handler is told once, with the "+
		"group's transaction, that the key changed, and its writes commit with the group. "+
		"A failure fails the batch (nothing of it commits), which the engine retries as its "+
		"policy says.", e.Name)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("handleGroup").Params(ctx, jen.Id("key").Add(n.key()), jen.Id("events").Index().Id(n.Event)).Error().Block(
		jen.Return(jen.Id("s").Dot("group").Dot("Do").Call(jen.Id("ctx"), keyText(n), jen.Len(jen.Id("events")), jen.Func().Params(workParams()...).Params(workResults()...).Block(
			jen.Err().Op(":=").Id("s").Dot("tx").Dot("h").Dot(n.HandleChanged).Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("key")),
			jen.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))).Block(
				jen.Return(gc("Result").Add(Keyed(Field{"Write", jen.Id("read")}, Field{"Verdict", skipUnimplemented()})), jen.Nil()),
			),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(noResult(), jen.Err())),
			jen.Return(gc("Result").Add(Keyed(Field{"Write", jen.Id("read")})), jen.Nil()),
		))),
	)
}

// newCommitter emits, in subscribe, the making of a grouped transactional
// subscriber's committer: its store must be a durable.GroupTxStore; the
// committer takes the subscriber's name, metrics and logger unless
// cfg.Group sets its own. attrs is the code of the subscriber's metric
// attributes.
func newCommitter(g *jen.Group, n names, attrs jen.Code) {
	e := n.e
	g.If(jen.Id("tx").Op("!=").Nil()).Block(
		jen.List(jen.Id("store"), jen.Id("ok")).Op(":=").Id("tx").Dot("store").Assert(du("GroupTxStore").Types(sqlTx())),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(errorf(n.pkg()+": subscribe %s: the schema asks for group commit of "+e.Name+
			" (group:), and store %T is no durable.GroupTxStore[*sql.Tx]", jen.Id("name"), jen.Id("tx").Dot("store")))),
		jen.Id("gc").Op(":=").Id("cfg").Dot("Group"),
		jen.If(jen.Id("gc").Dot("Name").Op("==").Lit("")).Block(jen.Id("gc").Dot("Name").Op("=").Id("name")),
		jen.If(jen.Id("gc").Dot("MeterProvider").Op("==").Nil()).Block(jen.Id("gc").Dot("MeterProvider").Op("=").Id("cfg").Dot("MeterProvider")),
		jen.Id("gc").Dot("MetricAttributes").Op("=").Append(jen.Add(attrs), jen.Id("gc").Dot("MetricAttributes").Op("...")),
		jen.If(jen.Id("gc").Dot("Logger").Op("==").Nil()).Block(jen.Id("gc").Dot("Logger").Op("=").Id("cfg").Dot("Logger")),
		jen.List(jen.Id("group"), jen.Err()).Op(":=").Add(gc("New")).Call(jen.Id("store"), jen.Id("name"), jen.Id("gc")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(n.pkg()+": subscribe %s: %w", jen.Id("name"), jen.Err()))),
		jen.Id("s").Dot("group").Op("=").Id("group"),
	)
}

// subscribeGroup emits, in subscribe, the engine of a grouped
// transactional subscriber: a batch engine over handleGroup, whose keys'
// batches fit in one group and do not linger (the group's linger does the
// waiting). Any other subscriber subscribes as without group:.
func subscribeGroup(g *jen.Group, n names, subscribe string) {
	e := n.e
	fail := jen.If(jen.Err().Op("!=").Nil()).Block(
		jen.If(jen.Id("s").Dot("group").Op("!=").Nil()).Block(jen.Id("s").Dot("group").Dot("Close").Call()),
		jen.Return(errorf(n.pkg()+": subscribe %s: %w", jen.Id("name"), jen.Err())),
	)
	var sizes []jen.Code
	if !e.Batch {
		sizes = append(sizes, jen.Id("rc").Dot("BatchSize").Op("=").Add(rt("DefaultBatchSize")))
	} else {
		sizes = append(sizes, jen.Id("rc").Dot("Linger").Op("=").Lit(0))
	}
	sizes = append(sizes,
		jen.If(jen.Id("limit").Op(":=").Id("cfg").Dot("Group").Dot("MaxEvents"), jen.Id("limit").Op(">").Lit(0).Op("&&").Id("rc").Dot("BatchSize").Op(">").Id("limit")).Block(
			jen.Id("rc").Dot("BatchSize").Op("=").Id("limit"),
		),
		jen.List(jen.Id("_"), jen.Err()).Op("=").Id("d").Dot("topic").Dot("SubscribeBatch").Call(jen.Id("s").Dot("handleGroup"), jen.Id("rc")),
	)
	g.Var().Err().Error()
	g.If(jen.Id("s").Dot("group").Op("!=").Nil()).Block(sizes...).Else().Block(
		jen.List(jen.Id("_"), jen.Err()).Op("=").Id("d").Dot("topic").Dot(subscribe).Call(jen.Id("s").Dot("engineHandler").Call(), jen.Id("rc")),
	)
	g.Add(fail)
}

// closeGroups emits the dispatcher's Close of a grouped entity: the
// committers close after the engines that call them have drained.
func closeGroups(f *jen.File, n names) {
	Doc(f, 0, "Close stops accepting events, drains every subscriber and stops their "+
		"workers, then closes the transactional subscribers' committers (group "+
		"commit). It returns an error when ctx ends before everything finished.")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Close").Params(jen.Id("ctx").Qual("context", "Context")).Error().Block(
		jen.Err().Op(":=").Id("d").Dot("topic").Dot("Close").Call(jen.Id("ctx")),
		jen.Id("d").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("d").Dot("mu").Dot("Unlock").Call(),
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Qual("slices", "Sorted").Call(jen.Qual("maps", "Keys").Call(jen.Id("d").Dot("subs")))).Block(
			jen.If(jen.Id("s").Op(":=").Id("d").Dot("subs").Index(jen.Id("name")), jen.Id("s").Dot("group").Op("!=").Nil()).Block(
				jen.If(jen.Id("cerr").Op(":=").Id("s").Dot("group").Dot("Close").Call(), jen.Id("cerr").Op("!=").Nil()).Block(
					jen.Err().Op("=").Qual("errors", "Join").Call(jen.Err(), errorf(n.pkg()+": close %s: %w", jen.Id("name"), jen.Id("cerr"))),
				),
			),
		),
		jen.Return(jen.Err()),
	)
}
