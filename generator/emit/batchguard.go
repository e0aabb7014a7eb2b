package emit

import (
	"github.com/dave/jennifer/jen"
)

// handleBatch emits the engine's batch handler of a subscriber of an
// entity with batch: (handleBatch, or handleBatchTx inside a transaction of
// the subscriber's store with tx). The guards decide each event of the
// batch in order against the key's stored version and state, as handle
// does for one, and tell the engine their verdicts (runtime.Verdicts);
// the events they let through go to the handler in one call, and the
// stores advance once, to the last version decided.
func handleBatch(f *jen.File, n names, tx bool) { handleBatchIn(f, n, tx, false) }

// handleBatchIn is handleBatch, or, with group, the batch handler of a
// transactional subscriber of a grouped entity (handleGroup): the same
// guards, in a work of the subscriber's groupcommit.Committer, which reads
// the key's version and state and commits the group's writes.
func handleBatchIn(f *jen.File, n names, tx, group bool) {
	e := n.e
	versioned := e.Version != nil
	snapshots := versioned && e.HasSnapshot()
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "
	name := "handleBatch"
	switch {
	case group:
		name = "handleGroup"
	case tx:
		name = "handleBatchTx"
	}
	// fail returns the statement that fails the batch with err.
	fail := func(err jen.Code) jen.Code {
		if group {
			return jen.Return(noResult(), err)
		}
		return jen.Return(err)
	}
	// read is the code of what the key's transaction read: its version or
	// its state.
	read := func(what string) jen.Code {
		if group {
			return jen.Id("read").Dot(what)
		}
		return jen.Id("tx").Dot(what).Call()
	}
	sqlTxArg := jen.Id("tx").Dot("Tx").Call()
	if group {
		sqlTxArg = jen.Id("tx")
	}

	text := name + " is the engine's batch handler of one "
	if tx {
		text += "transactional "
	}
	text += e.Name + " subscriber."
	if group {
		text += " The schema asks for group commit (group:): the batch is one work of the " +
			"subscriber's groupcommit.Committer, run in a transaction shared with other keys' " +
			"work, from the version and state the group read; the key's new ones are written, " +
			"and everything committed, with the group. A handler's failure fails the batch: " +
			"nothing of it commits."
	}
	if versioned || stated {
		text += " The guards decide each event of the batch in order, as handle does for " +
			"one: "
		switch {
		case versioned && stated:
			text += "a duplicate or stale event is skipped, a delta after a version gap is " +
				"held back until the gap fills, the state guard " + stateRule(e) + " (a " +
				"skipped event still uses up its version), and a snapshot across a gap ends " +
				"the batch (the rest comes in the next one), so that the batch never spans a gap."
		case versioned:
			text += "a duplicate or stale event is skipped, a delta after a version gap is " +
				"held back until the gap fills, and a snapshot across a gap ends the batch " +
				"(the rest comes in the next one), so that the batch never spans a gap."
		default:
			text += "the state guard " + stateRule(e) + "."
		}
		reached := "version and state"
		switch {
		case !stated:
			reached = "version"
		case !versioned:
			reached = "state"
		}
		text += " The handler gets the others in one call, and the stores advance once, " +
			"to the last " + reached + " decided"
		if tx {
			text += ", in the transaction the handler writes in."
			if group {
				text = text[:len(text)-1] + ", when the group commits."
			}
		} else {
			text += ", after the handler succeeded."
		}
		text += " The engine learns each event's verdict (runtime.Verdicts)."
	} else if tx {
		text += " The handler gets the batch in one transaction of the subscriber's store."
	}
	Doc(f, 0, "%s", text)
	ctx := jen.Id("ctx").Qual("context", "Context")
	h := jen.Id("s").Dot("h")
	if tx {
		h = jen.Id("s").Dot("tx").Dot("h")
	}
	call := func() *jen.Statement {
		args := []jen.Code{jen.Id("ctx")}
		if tx {
			args = append(args, sqlTxArg)
		}
		args = append(args, jen.Id("key"), jen.Id("apply"))
		return h.Clone().Dot(n.HandleBatch).Call(args...)
	}
	body := func(g *jen.Group) {
		if tx && !group {
			g.List(jen.Id("tx"), jen.Err()).Op(":=").Id("s").Dot("tx").Dot("store").Dot("BeginKey").Call(jen.Id("ctx"), jen.Id("s").Dot("name"), keyText(n))
			g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"%w", jen.Id("key"), jen.Err())))
			g.Defer().Id("tx").Dot("Rollback").Call()
		}
		if !versioned && !stated {
			// Nothing to decide: the batch is the handler's, as a whole.
			args := []jen.Code{jen.Id("ctx")}
			if tx {
				args = append(args, sqlTxArg)
			}
			args = append(args, jen.Id("key"), jen.Id("events"))
			assign := ":="
			if tx && !group {
				assign = "="
			}
			g.Err().Op(assign).Add(h.Clone().Dot(n.HandleBatch).Call(args...))
			g.Id("unimplemented").Op(":=").Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))
			g.If(jen.Err().Op("!=").Nil().Op("&&").Op("!").Id("unimplemented")).Block(fail(jen.Err()))
			if group {
				g.If(jen.Id("unimplemented")).Block(jen.Return(gc("Result").Add(Keyed(Field{"Write", jen.Id("read")}, Field{"Verdict", rt("SkipApplied").Call(rt("ReasonUnimplemented"))})), jen.Nil()))
				g.Return(gc("Result").Add(Keyed(Field{"Write", jen.Id("read")})), jen.Nil())
				return
			}
			if tx {
				g.If(jen.Err().Op(":=").Id("tx").Dot("Commit").Call(jen.Id("ctx"), jen.Id("tx").Dot("Version").Call(), jen.Id("tx").Dot("State").Call()), jen.Err().Op("!=").Nil()).Block(
					jen.Return(errorf(keyFmt+"commit: %w", jen.Id("key"), jen.Err())),
				)
			}
			acknowledge(g)
			return
		}

		// What is stored: stored and before; what the batch reaches: last
		// and current.
		if versioned {
			if tx {
				g.Id("stored").Op(":=").Add(read("Version"))
			} else {
				g.List(jen.Id("stored"), jen.Err()).Op(":=").Id("s").Dot("versions").Dot("Version").Call(jen.Id("ctx"), jen.Id("key"))
				g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"read version: %w", jen.Id("key"), jen.Err())))
			}
		}
		if stated {
			if tx {
				g.Id("before").Op(":=").Id(n.State).Call(read("State"))
			} else {
				g.List(jen.Id("state"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("State").Call(jen.Id("ctx"), jen.Id("key"))
				g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"read state: %w", jen.Id("key"), jen.Err())))
				g.Id("before").Op(":=").Id(n.State).Call(jen.Id("state"))
			}
			g.If(jen.Id(n.Rank).Call(jen.Id("before")).Op("==").Lit(-2)).Block(fail(rt("Permanent").Call(
				errorf(keyFmt+"stored state %q is not a state of "+e.Name, jen.Id("key"), jen.Id("before")),
			)))
		}
		switch {
		case versioned && stated:
			g.List(jen.Id("last"), jen.Id("current")).Op(":=").List(jen.Id("stored"), jen.Id("before"))
		case versioned:
			g.Id("last").Op(":=").Id("stored")
		default:
			g.Id("current").Op(":=").Id("before")
		}
		g.Id("apply").Op(":=").Make(jen.Index().Id(n.Event), jen.Lit(0), jen.Len(jen.Id("events")))
		g.Id("verdicts").Op(":=").Make(jen.Index().Error(), jen.Lit(0), jen.Len(jen.Id("events")))
		g.For(jen.List(jen.Id("_"), jen.Id("ev")).Op(":=").Range().Id("events")).BlockFunc(func(g *jen.Group) {
			unknown := unknownEvent(n)
			if group {
				unknown = fail(rt("Permanent").Call(errorf(keyFmt+"unknown event %T", jen.Id("key"), jen.Id("ev"))))
			}
			guardFacts(g, n, snapshots, unknown)
			if versioned {
				snapshot := jen.False()
				if snapshots {
					snapshot = jen.Id("snapshot")
				}
				g.If(jen.Err().Op(":=").Add(rt("CheckVersion")).Call(jen.Id("version"), jen.Id("last"), snapshot), jen.Err().Op("!=").Nil()).Block(
					jen.Id("verdicts").Op("=").Append(jen.Id("verdicts"), jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), jen.Err())),
					jen.Continue(),
				)
				if snapshots {
					g.If(jen.Id("version").Op(">").Id("last").Op("+").Lit(1).Op("&&").Len(jen.Id("apply")).Op(">").Lit(0)).Block(
						jen.Break().Comment("a snapshot across a gap starts the next batch"),
					)
				}
			}
			if stated {
				skip := []jen.Code{}
				if versioned {
					skip = append(skip, jen.Id("last").Op("=").Id("version").Comment("a skipped event still uses up its version"))
				}
				if d := logDuplicate(n); d != nil {
					skip = append(skip, d)
				}
				skip = append(skip,
					jen.Id("verdicts").Op("=").Append(jen.Id("verdicts"), jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), rt("Skip").Call(jen.Id("reason")))),
					jen.Continue(),
				)
				g.If(readsState(e)).BlockFunc(func(g *jen.Group) {
					stateReason(g, n)
					g.If(jen.Id("reason").Op("!=").Lit("")).Block(skip...)
					if e.HasWithin() {
						g.If(jen.Id("target").Op("!=").Lit("")).Block(jen.Id("current").Op("=").Id("target"))
					} else {
						g.Id("current").Op("=").Id("target")
					}
				})
			}
			if versioned {
				g.Id("last").Op("=").Id("version")
			}
			g.Id("apply").Op("=").Append(jen.Id("apply"), jen.Id("ev"))
			g.Id("verdicts").Op("=").Append(jen.Id("verdicts"), jen.Nil())
		})
		g.If(jen.Len(jen.Id("apply")).Op(">").Lit(0)).Block(
			jen.Err().Op(":=").Add(call()),
			jen.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))).Block(
				jen.Comment("Acknowledged, not applied: the stores still advance."),
				jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id("verdicts")).Block(
					jen.If(jen.Id("v").Op("==").Nil()).Block(
						jen.Id("verdicts").Index(jen.Id("i")).Op("=").Add(skipUnimplemented()),
					),
				),
			).Else().If(jen.Err().Op("!=").Nil()).Block(fail(jen.Err())),
		)
		// The stores advance once, to what the batch reached.
		var moved []jen.Code
		if versioned {
			moved = append(moved, jen.Id("last").Op("!=").Id("stored"))
		}
		if stated {
			moved = append(moved, jen.Id("current").Op("!=").Id("before"))
		}
		changed := moved[0]
		if len(moved) == 2 {
			changed = jen.Add(moved[0]).Op("||").Add(moved[1])
		}
		if group {
			version := jen.Id("read").Dot("Version")
			if versioned {
				version = jen.Id("last")
			}
			state := jen.Id("read").Dot("State")
			if stated {
				state = jen.String().Call(jen.Id("current"))
			}
			write := du("KeyState").Add(Keyed(Field{"Version", version}, Field{"State", state}))
			g.Return(gc("Result").Add(Keyed(Field{"Write", write}, Field{"Verdict", rt("Verdicts").Call(jen.Id("verdicts"))})), jen.Nil())
			return
		}
		if tx {
			version := jen.Id("tx").Dot("Version").Call()
			if versioned {
				version = jen.Id("last")
			}
			state := jen.Id("tx").Dot("State").Call()
			if stated {
				state = jen.String().Call(jen.Id("current"))
			}
			g.If(jen.Len(jen.Id("apply")).Op(">").Lit(0).Op("||").Add(changed)).Block(
				jen.If(jen.Err().Op(":=").Id("tx").Dot("Commit").Call(jen.Id("ctx"), version, state), jen.Err().Op("!=").Nil()).Block(
					jen.Return(errorf(keyFmt+"commit: %w", jen.Id("key"), jen.Err())),
				),
			)
		} else {
			if stated {
				g.If(jen.Id("current").Op("!=").Id("before")).Block(
					jen.List(jen.Id("ok"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("CompareAndSetState").Call(jen.Id("ctx"), jen.Id("key"), jen.String().Call(jen.Id("before")), jen.String().Call(jen.Id("current"))),
					jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"store state %s: %w", jen.Id("key"), jen.Id("current"), jen.Err()))),
					jen.If(jen.Op("!").Id("ok")).Block(jen.Return(errorf(keyFmt+"state moved from %q by another writer", jen.Id("key"), jen.Id("before")))),
				)
			}
			if versioned {
				g.If(jen.Id("last").Op("!=").Id("stored")).Block(
					jen.If(jen.Err().Op(":=").Id("s").Dot("setVersion").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("stored"), jen.Id("last")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				)
			}
		}
		g.Return(rt("Verdicts").Call(jen.Id("verdicts")))
	}
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id(name).Params(ctx, jen.Id("key").Add(n.key()), jen.Id("events").Index().Id(n.Event)).Error().BlockFunc(func(g *jen.Group) {
		if !group {
			body(g)
			return
		}
		g.Return(jen.Id("s").Dot("group").Dot("Do").Call(jen.Id("ctx"), keyText(n), jen.Len(jen.Id("events")),
			jen.Func().Params(workParams()...).Params(workResults()...).BlockFunc(body)))
	})
}

// resync emits the engine's Resync of a subscriber of an entity with
// on_gap: resync (resync, or resyncTx inside a transaction of the
// subscriber's store with tx): it asks the handler for the key's state at
// the source of truth and stores it as the key's version and state.
func resync(f *jen.File, n names, tx bool) {
	e := n.e
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "
	name := "resync"
	where := "stores"
	if tx {
		name = "resyncTx"
		where = "commits, in the transaction the handler wrote in,"
	}
	what := "version"
	if stated {
		what = "version and state"
	}
	Doc(f, 0, "%s is the engine's Resync (runtime.ResyncFunc) of one %s subscriber: "+
		"when the resequencer bound of key is hit, it asks the handler for the key's "+
		"%s at the source of truth (%s) and %s them as the key's. The "+
		"engine then offers the held events again: the guards skip the ones the new "+
		"version covers, whose number it returns, and apply the later ones in order. A "+
		"version that is not above the stored one is a failure (the source of truth is "+
		"behind the gap): the engine retries, then parks the key.", name, e.Name, what, n.Resync, where)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id(name).Params(ctx, jen.Id("key").Add(n.key()), jen.Id("held").Index().Id(n.Event)).Params(jen.Int(), jen.Error()).BlockFunc(func(g *jen.Group) {
		fail := func(err jen.Code) jen.Code { return jen.Return(jen.Lit(0), err) }
		args := []jen.Code{jen.Id("ctx")}
		h := jen.Id("s").Dot("h")
		if tx {
			g.List(jen.Id("tx"), jen.Err()).Op(":=").Id("s").Dot("tx").Dot("store").Dot("BeginKey").Call(jen.Id("ctx"), jen.Id("s").Dot("name"), keyText(n))
			g.If(jen.Err().Op("!=").Nil()).Block(fail(errorf(keyFmt+"%w", jen.Id("key"), jen.Err())))
			g.Defer().Id("tx").Dot("Rollback").Call()
			g.Id("stored").Op(":=").Id("tx").Dot("Version").Call()
			args = append(args, jen.Id("tx").Dot("Tx").Call())
			h = jen.Id("s").Dot("tx").Dot("h")
		} else {
			g.List(jen.Id("stored"), jen.Err()).Op(":=").Id("s").Dot("versions").Dot("Version").Call(jen.Id("ctx"), jen.Id("key"))
			g.If(jen.Err().Op("!=").Nil()).Block(fail(errorf(keyFmt+"read version: %w", jen.Id("key"), jen.Err())))
			if stated {
				g.List(jen.Id("state"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("State").Call(jen.Id("ctx"), jen.Id("key"))
				g.If(jen.Err().Op("!=").Nil()).Block(fail(errorf(keyFmt+"read state: %w", jen.Id("key"), jen.Err())))
			}
		}
		args = append(args, jen.Id("key"))
		g.List(jen.Id("source"), jen.Err()).Op(":=").Add(h).Dot(n.Resync).Call(args...)
		g.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))).Block(
			fail(rt("Permanent").Call(errorf(keyFmt+"resync: %w", jen.Id("key"), jen.Err()))),
		)
		g.If(jen.Err().Op("!=").Nil()).Block(fail(errorf(keyFmt+"resync: %w", jen.Id("key"), jen.Err())))
		g.If(jen.Id("source").Dot("Version").Op("<=").Id("stored")).Block(
			fail(errorf(keyFmt+"resync reached version %d, not above the stored %d: the source of truth is behind the gap", jen.Id("key"), jen.Id("source").Dot("Version"), jen.Id("stored"))),
		)
		if stated {
			g.If(jen.Id(n.Rank).Call(jen.Id("source").Dot("State")).Op("==").Lit(-2)).Block(
				fail(rt("Permanent").Call(errorf(keyFmt+"resync reached state %q, not a state of "+e.Name, jen.Id("key"), jen.Id("source").Dot("State")))),
			)
		}
		if tx {
			state := jen.Id("tx").Dot("State").Call()
			if stated {
				state = jen.String().Call(jen.Id("source").Dot("State"))
			}
			g.If(jen.Err().Op(":=").Id("tx").Dot("Commit").Call(jen.Id("ctx"), jen.Id("source").Dot("Version"), state), jen.Err().Op("!=").Nil()).Block(
				fail(errorf(keyFmt+"commit the resync: %w", jen.Id("key"), jen.Err())),
			)
		} else {
			if stated {
				g.If(jen.String().Call(jen.Id("source").Dot("State")).Op("!=").Id("state")).Block(
					jen.List(jen.Id("ok"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("CompareAndSetState").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("state"), jen.String().Call(jen.Id("source").Dot("State"))),
					jen.If(jen.Err().Op("!=").Nil()).Block(fail(errorf(keyFmt+"store state %s: %w", jen.Id("key"), jen.Id("source").Dot("State"), jen.Err()))),
					jen.If(jen.Op("!").Id("ok")).Block(fail(errorf(keyFmt+"state moved from %q by another writer", jen.Id("key"), jen.Id("state")))),
				)
			}
			g.If(jen.Err().Op(":=").Id("s").Dot("setVersion").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("stored"), jen.Id("source").Dot("Version")), jen.Err().Op("!=").Nil()).Block(fail(jen.Err()))
		}
		g.Id("covered").Op(":=").Lit(0)
		g.For(jen.List(jen.Id("_"), jen.Id("ev")).Op(":=").Range().Id("held")).Block(
			jen.If(jen.Id("ev").Dot("EventVersion").Call().Op("<=").Id("source").Dot("Version")).Block(jen.Id("covered").Op("++")),
		)
		g.Return(jen.Id("covered"), jen.Nil())
	})
}
