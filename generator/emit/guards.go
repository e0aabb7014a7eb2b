package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func guards(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		if e.HasStateGuard() {
			rank(f, n)
			transition(f, n)
			if e.HasWithin() {
				within(f, n)
			}
		}
		if e.Version != nil || e.HasStateGuard() {
			skipHelpers(f, n)
		}
		if e.Batch {
			handleBatch(f, n, false)
		} else {
			handle(f, n)
		}
		if e.Version != nil {
			setVersion(f, n)
		}
		if e.Resync {
			resync(f, n, false)
		}
	}
}

// handle emits the engine handler of a subscriber.
func handle(f *jen.File, n names) {
	e := n.e
	versioned := e.Version != nil
	snapshots := versioned && e.HasSnapshot()
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "

	text := "handle is the engine handler of one " + e.Name + " subscriber."
	if e.Notification {
		text += " It tells the handler that the event's key changed."
	}
	if versioned {
		text += " The version guard skips a duplicate or stale event (version <= stored), " +
			"applies the next one (stored+1) and, on a gap, applies a snapshot but holds " +
			"a delta back until the versions before it arrive."
		if e.Resync {
			text += " Past the resequencer's bound the key is resynced (resync)."
		}
	}
	if stated {
		text += " The state guard " + stateRule(e) + "."
	}
	if versioned || stated {
		text += " The stores are updated after the handler succeeded, or returned " +
			"runtime.ErrUnimplemented: that event is then skipped as unimplemented."
	}
	Doc(f, 0, "%s", text)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("handle").Params(ctx, jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event)).Error().BlockFunc(func(g *jen.Group) {
		call := func(ev *ir.Event) jen.Code {
			if e.Notification {
				return jen.Id("s").Dot("h").Dot(n.HandleChanged).Call(jen.Id("ctx"), jen.Id("key"))
			}
			return jen.Id("s").Dot("h").Dot(ev.Handle).Call(jen.Id("ctx"), jen.Id("e"))
		}
		unknown := unknownEvent(n)
		if !versioned && !stated {
			g.Var().Err().Error()
			g.Add(dispatchSwitch(n, call, unknown))
			g.If(jen.Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))).Block(jen.Return(skipUnimplemented()))
			g.Return(jen.Err())
			return
		}

		guardFacts(g, n, snapshots, unknown)

		if versioned {
			g.List(jen.Id("stored"), jen.Err()).Op(":=").Id("s").Dot("versions").Dot("Version").Call(jen.Id("ctx"), jen.Id("key"))
			g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"read version: %w", jen.Id("key"), jen.Err())))
			g.Add(checkVersion(snapshots))
		} else {
			g.Var().Err().Error()
		}

		if stated {
			g.Var().Id("current").Id(n.State)
			g.If(readsState(e)).BlockFunc(func(g *jen.Group) {
				g.List(jen.Id("state"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("State").Call(jen.Id("ctx"), jen.Id("key"))
				g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"read state: %w", jen.Id("key"), jen.Err())))
				g.Id("current").Op("=").Id(n.State).Call(jen.Id("state"))
				var useVersion jen.Code
				if versioned {
					useVersion = jen.If(jen.Err().Op(":=").Id("s").Dot("setVersion").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("stored"), jen.Id("version")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
				}
				checkState(g, n, useVersion)
			})
		}

		g.Add(dispatchSwitch(n, call, nil))
		unimplemented(g)
		if stated {
			// A move to the current state (with a version) writes nothing.
			g.If(jen.Id("target").Op("!=").Lit("").Op("&&").Id("target").Op("!=").Id("current")).Block(
				jen.List(jen.Id("ok"), jen.Err()).Op(":=").Id("s").Dot("states").Dot("CompareAndSetState").Call(jen.Id("ctx"), jen.Id("key"), jen.String().Call(jen.Id("current")), jen.String().Call(jen.Id("target"))),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"store state %s: %w", jen.Id("key"), jen.Id("target"), jen.Err()))),
				jen.If(jen.Op("!").Id("ok")).Block(jen.Return(errorf(keyFmt+"state moved from %q by another writer", jen.Id("key"), jen.Id("current")))),
			)
		}
		if versioned {
			g.If(jen.Err().Op(":=").Id("s").Dot("setVersion").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("stored"), jen.Id("version")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		}
		acknowledge(g)
	})

}

// setVersion emits the helper that stores a key's version by
// compare-and-set.
func setVersion(f *jen.File, n names) {
	keyFmt := n.pkg() + ": " + n.e.Name + " %v: "
	ctx := jen.Id("ctx").Qual("context", "Context")
	Doc(f, 0, "setVersion stores version as the last applied version of key, if the stored "+
		"version is still stored.")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("setVersion").Params(ctx, jen.Id("key").Add(n.key()), jen.List(jen.Id("stored"), jen.Id("version")).Uint64()).Error().Block(
		jen.List(jen.Id("ok"), jen.Err()).Op(":=").Id("s").Dot("versions").Dot("CompareAndSet").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("stored"), jen.Id("version")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"store version %d: %w", jen.Id("key"), jen.Id("version"), jen.Err()))),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(errorf(keyFmt+"version moved from %d by another writer", jen.Id("key"), jen.Id("stored")))),
		jen.Return(jen.Nil()),
	)
}

// dispatchSwitch returns the type switch on ev that sets err to the
// handler method's result for each event type; call gives the call for
// an event, with the event as e. unknown, when not nil, is the default.
func dispatchSwitch(n names, call func(*ir.Event) jen.Code, unknown jen.Code) *jen.Statement {
	if n.e.Notification {
		// Every notification makes the same call, without the event.
		return jen.Switch(jen.Id("ev").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			var types []jen.Code
			for _, ev := range n.e.Events {
				types = append(types, jen.Id(ev.Name))
			}
			g.Case(types...).Block(jen.Err().Op("=").Add(call(nil)))
			if unknown != nil {
				g.Default().Block(unknown)
			}
		})
	}
	return jen.Switch(jen.Id("e").Op(":=").Id("ev").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
		for _, ev := range n.e.Events {
			g.Case(jen.Id(ev.Name)).Block(jen.Err().Op("=").Add(call(ev)))
		}
		if unknown != nil {
			g.Default().Block(unknown)
		}
	})
}

// unknownEvent returns the statement for an event of no type of the
// entity (nil): it fails for good.
func unknownEvent(n names) jen.Code {
	return jen.Return(rt("Permanent").Call(errorf(n.pkg()+": "+n.e.Name+" %v: unknown event %T", jen.Id("key"), jen.Id("ev"))))
}

// unimplemented emits the check of the handler's err after the dispatch:
// any error but runtime.ErrUnimplemented is returned; that one lets the
// guards advance the stores as for a handled event.
func unimplemented(g *jen.Group) {
	g.Id("unimplemented").Op(":=").Qual("errors", "Is").Call(jen.Err(), rt("ErrUnimplemented"))
	g.If(jen.Err().Op("!=").Nil().Op("&&").Op("!").Id("unimplemented")).Block(jen.Return(jen.Err()))
}

// acknowledge emits the end of a guard whose stores were advanced: an
// unimplemented event is skipped with its reason, and with
// runtime.SkipApplied, since its version was stored as a handled event's
// (events held on a gap it filled are due again); any other is handled.
func acknowledge(g *jen.Group) {
	g.If(jen.Id("unimplemented")).Block(jen.Return(rt("SkipApplied").Call(rt("ReasonUnimplemented"))))
	g.Return(jen.Nil())
}

func skipUnimplemented() jen.Code { return rt("Skip").Call(rt("ReasonUnimplemented")) }

// rank emits the rank function of an entity's states.
func rank(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns the rank of %s %s state: 1 for the first ranked state, 0 "+
		"for none yet, -1 for a branch state and -2 for a name that is not a state.", n.Rank, Article(e.Name), e.Name)
	f.Func().Id(n.Rank).Params(jen.Id("state").Id(n.State)).Int().Block(
		jen.Switch(jen.Id("state")).BlockFunc(func(g *jen.Group) {
			g.Case(jen.Lit("")).Block(jen.Return(jen.Lit(0)))
			for i, s := range e.States {
				g.Case(jen.Id(n.StateConst(s))).Block(jen.Return(jen.Lit(i + 1)))
			}
			if len(e.Branches) > 0 {
				g.CaseFunc(func(g *jen.Group) {
					for _, b := range e.Branches {
						g.Id(n.StateConst(b.Name))
					}
				}).Block(jen.Return(jen.Lit(-1)))
			}
		}),
		jen.Return(jen.Lit(-2)),
	)
}

// transition emits the function that decides whether a state change may
// happen. With a version, the version guard has told a newer event from a
// duplicate already: a move to the current state applies, and only a move
// to a state ranked below it is late. Without one, a move to the current
// state is a duplicate.
func transition(f *jen.File, n names) {
	e := n.e
	versioned := e.Version != nil
	again := "a move to the current state is skipped as a duplicate (" + Article(e.Name) + " " + e.Name +
		" has no version to tell a newer event from a copy)"
	if versioned {
		again = "a move to the current state applies (the version guard has skipped the duplicates already)"
	}
	Doc(f, 0, "%s returns why %s %s in state current must not move to target, "+
		"or \"\" when it may. Ranked states only move forward: a move to a state ranked "+
		"below the current one is late, and %s. A branch state is entered only from the "+
		"states it lists, and no ranked state follows it.", n.Transition, Article(e.Name), e.Name, again)
	f.Func().Id(n.Transition).Params(jen.List(jen.Id("current"), jen.Id("target")).Id(n.State)).String().BlockFunc(func(g *jen.Group) {
		if len(e.Branches) > 0 {
			g.Switch(jen.Id("target")).BlockFunc(func(g *jen.Group) {
				for _, b := range e.Branches {
					from := b.From
					if versioned {
						from = append(slices.Clone(b.From), b.Name)
					}
					cases := []jen.Code{jen.CaseFunc(func(g *jen.Group) {
						for _, s := range from {
							g.Id(n.StateConst(s))
						}
					}).Block(jen.Return(jen.Lit("")))}
					if !versioned {
						cases = append(cases, jen.Case(jen.Id(n.StateConst(b.Name))).Block(jen.Return(jen.Lit(duplicateReason+b.Name))))
					}
					g.Case(jen.Id(n.StateConst(b.Name))).Block(
						jen.Switch(jen.Id("current")).Block(cases...),
						jen.Return(jen.Lit("state "+b.Name+" may be entered only from "+list(b.From, "or"))),
					)
				}
			})
		}
		g.List(jen.Id("from"), jen.Id("to")).Op(":=").Id(n.Rank).Call(jen.Id("current")).Op(",").Id(n.Rank).Call(jen.Id("target"))
		g.Switch().BlockFunc(func(g *jen.Group) {
			if len(e.Branches) > 0 {
				g.Case(jen.Id("from").Op("==").Lit(-1)).Block(jen.Return(jen.Lit("late transition: no ranked state follows branch state ").Op("+").String().Call(jen.Id("current"))))
			}
			if versioned {
				g.Case(jen.Id("from").Op("<=").Id("to")).Block(jen.Return(jen.Lit("")))
				return
			}
			g.Case(jen.Id("from").Op("<").Id("to")).Block(jen.Return(jen.Lit("")))
			g.Case(jen.Id("from").Op("==").Id("to")).Block(jen.Return(jen.Lit(duplicateReason).Op("+").String().Call(jen.Id("target"))))
		})
		g.Return(jen.Lit("late transition: state ").Op("+").String().Call(jen.Id("target")).Op("+").Lit(" ranks below ").Op("+").String().Call(jen.Id("current")))
	})
}

// duplicateReason starts the reason of a move to the current state of an
// entity without a version.
const duplicateReason = "duplicate: already in state "

// within emits the function that decides whether an event that happens
// only within some states (in:) may apply in the current state.
func within(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns why %s %s in state current must not take ev, an event "+
		"that happens only within the states its in: lists, without moving it, "+
		"or \"\" when it may (and for any other event).", n.Within, Article(e.Name), e.Name)
	f.Func().Id(n.Within).Params(jen.Id("current").Id(n.State), jen.Id("ev").Id(n.Event)).String().BlockFunc(func(g *jen.Group) {
		g.Switch(jen.Id("ev").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				if len(ev.In) == 0 {
					continue
				}
				applies := ev.Name + " applies only in " + list(ev.In, "or")
				g.Case(jen.Id(ev.Name)).Block(
					jen.Switch(jen.Id("current")).Block(
						jen.CaseFunc(func(g *jen.Group) {
							for _, st := range ev.In {
								g.Id(n.StateConst(st))
							}
						}).Block(jen.Return(jen.Lit(""))),
						jen.Case(jen.Lit("")).Block(jen.Return(jen.Lit(applies+", and the "+e.Name+" has no state yet"))),
					),
					jen.Return(jen.Lit(applies+", not in ").Op("+").String().Call(jen.Id("current"))),
				)
			}
		})
		g.Return(jen.Lit(""))
	})
}

// readsState returns the condition under which the state guard reads the
// key's state: the event moves it (target), or happens within states
// (within).
func readsState(e *ir.Entity) *jen.Statement {
	c := jen.Id("target").Op("!=").Lit("")
	if e.HasWithin() {
		c = c.Op("||").Id("within")
	}
	return c
}

// stateReason emits, into g, reason: why the state guard skips ev, an
// event of an entity in state current, or "".
func stateReason(g *jen.Group, n names) {
	if !n.e.HasWithin() {
		g.Id("reason").Op(":=").Id(n.Transition).Call(jen.Id("current"), jen.Id("target"))
		return
	}
	g.Id("reason").Op(":=").Id(n.Within).Call(jen.Id("current"), jen.Id("ev"))
	g.If(jen.Id("target").Op("!=").Lit("")).Block(
		jen.Id("reason").Op("=").Id(n.Transition).Call(jen.Id("current"), jen.Id("target")),
	)
}

// stateRule says what the state guard of e skips, and what becomes of a
// move to the current state, for the comments (after "The state guard ").
func stateRule(e *ir.Entity) string {
	skips := []string{"a move to a state ranked below the current one (late)"}
	if len(e.Branches) > 0 {
		skips = append(skips, "a branch state entered from a state it does not list")
	}
	if e.HasWithin() {
		skips = append(skips, "an event with in: while the entity is in none of its states")
	}
	text := "skips " + list(skips, "and")
	if e.Version != nil {
		return text + "; a move to the current state applies (its version is newer: the " +
			"version guard skipped the duplicates)"
	}
	return text + "; a move to the current state is skipped as a duplicate (without a " +
		"version a second event to the state cannot be told from a copy)"
}

// checkState emits the state guard's checks of current against target (or
// ev's in: states): a stored state the entity does not have fails for
// good; an event that must not apply is skipped, after useVersion (if any)
// stored the event's version, since a skipped event still uses up its
// version or the next one would wait for it forever. Without a version,
// the first skip at the current state is logged once.
func checkState(g *jen.Group, n names, useVersion jen.Code) {
	e := n.e
	g.If(jen.Id(n.Rank).Call(jen.Id("current")).Op("==").Lit(-2)).Block(jen.Return(rt("Permanent").Call(
		errorf(n.pkg()+": "+e.Name+" %v: stored state %q is not a state of "+e.Name, jen.Id("key"), jen.Id("current")),
	)))
	stateReason(g, n)
	// With the version stored, the skip is runtime.SkipApplied: events held
	// on the gap it filled are due again.
	verdict := rt("Skip").Call(jen.Id("reason"))
	var skip []jen.Code
	if useVersion != nil {
		skip = append(skip, useVersion)
		verdict = rt("SkipApplied").Call(jen.Id("reason"))
	}
	if d := logDuplicate(n); d != nil {
		skip = append(skip, d)
	}
	skip = append(skip, jen.Return(jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), verdict)))
	g.If(jen.Id("reason").Op("!=").Lit("")).Block(skip...)
}

// logDuplicate returns the statement that logs, once, a skip at the current
// state of an entity without a version (nil for one with a version, where
// such a move applies).
func logDuplicate(n names) jen.Code {
	if n.e.Version != nil {
		return nil
	}
	same := jen.Id("current").Op("==").Id("target")
	if n.e.HasWithin() {
		same = jen.Id("target").Op("!=").Lit("").Op("&&").Add(same)
	}
	return jen.If(same).Block(jen.Id("s").Dot("duplicate").Call(jen.Id("ctx"), jen.Id("key"), jen.Id("ev"), jen.Id("reason")))
}

// skipHelpers emits the subscriber's skip, through which every guard's
// verdict on an event goes (it tells OnSkip about the skips), and, for an
// entity with states and no version, duplicate, which logs the first skip
// at the current state.
func skipHelpers(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "skip returns verdict, a guard's verdict on ev, an event of key; when it "+
		"is a skip, it tells the subscriber's OnSkip (%s.OnSkip) first.", n.Config)
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("skip").Params(jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event), jen.Id("verdict").Error()).Error().Block(
		jen.If(jen.Id("s").Dot("onSkip").Op("!=").Nil()).Block(
			jen.If(jen.List(jen.Id("reason"), jen.Id("ok")).Op(":=").Add(rt("IsSkip")).Call(jen.Id("verdict")), jen.Id("ok")).Block(
				jen.Id("s").Dot("onSkip").Call(jen.Id("key"), jen.Id("ev"), jen.Id("reason")),
			),
		),
		jen.Return(jen.Id("verdict")),
	)
	if e.Version != nil || !e.HasStateGuard() {
		return
	}
	Doc(f, 0, "duplicate logs, at debug level and once for the subscriber, the first "+
		"event its state guard skips because it moves %s %s to the state it is in: "+
		"without a version that is a duplicate, and a schema that means an event within "+
		"a state (in:) loses events silently. The later ones are counted as skipped.", Article(e.Name), e.Name)
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("duplicate").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event), jen.Id("reason").String()).Block(
		jen.If(jen.Op("!").Id("s").Dot("duplicateLogged").Dot("CompareAndSwap").Call(jen.False(), jen.True())).Block(jen.Return()),
		jen.Id("log").Op(":=").Id("s").Dot("log"),
		jen.If(jen.Id("log").Op("==").Nil()).Block(jen.Id("log").Op("=").Qual("log/slog", "Default").Call()),
		jen.Id("log").Dot("DebugContext").Call(jen.Id("ctx"),
			jen.Line().Lit("ordergen: skipped a move to the state the key is in, as a duplicate ("+e.Name+
				" has no version); logged once per subscriber, the later ones are counted as skipped"),
			jen.Line().Lit("subscriber").Op(",").Id("s").Dot("name").Op(",").Lit("key").Op(",").Id("key").Op(",").
				Lit("event").Op(",").Id("ev").Dot("EventName").Call().Op(",").Lit("reason").Op(",").Id("reason"),
			jen.Line().Lit("hint").Op(",").Lit("an event that happens within a state without moving it takes in: [states] in the schema, not to:").Op(",").Line(),
		),
	)
}

// checkVersion returns the version guard's statement: the runtime decides
// (runtime.CheckVersion) from version, stored and, where the entity has
// snapshots, snapshot; a skip goes through the subscriber's skip.
func checkVersion(snapshots bool) jen.Code {
	snapshot := jen.False()
	if snapshots {
		snapshot = jen.Id("snapshot")
	}
	return jen.If(
		jen.Err().Op(":=").Add(rt("CheckVersion")).Call(jen.Id("version"), jen.Id("stored"), snapshot),
		jen.Err().Op("!=").Nil(),
	).Block(jen.Return(jen.Id("s").Dot("skip").Call(jen.Id("key"), jen.Id("ev"), jen.Err())))
}

// guardFacts declares what the guards need from the event ev (version,
// snapshot, target state, as the entity has them) and sets them with a type
// switch; an event of no type of the entity runs unknown.
func guardFacts(g *jen.Group, n names, snapshots bool, unknown jen.Code) {
	e := n.e
	versioned, stated := e.Version != nil, e.HasStateGuard()
	var decl []jen.Code
	if versioned {
		decl = append(decl, jen.Id("version").Uint64())
	}
	if snapshots {
		decl = append(decl, jen.Id("snapshot").Bool())
	}
	if stated {
		decl = append(decl, jen.Id("target").Id(n.State))
	}
	if e.HasWithin() {
		decl = append(decl, jen.Id("within").Bool())
	}
	switch len(decl) {
	case 0:
	case 1:
		g.Var().Add(decl[0])
	default:
		g.Var().Defs(decl...)
	}
	// Only the version is read from the event itself.
	on := jen.Id("ev").Assert(jen.Type())
	if versioned {
		on = jen.Id("e").Op(":=").Add(on)
	}
	g.Switch(on).BlockFunc(func(g *jen.Group) {
		for _, ev := range e.Events {
			var body []jen.Code
			if versioned {
				body = append(body, jen.Id("version").Op("=").Add(versionExpr(e, jen.Id("e"))))
			}
			if ev.Snapshot {
				body = append(body, jen.Id("snapshot").Op("=").True())
			}
			if ev.To != "" {
				body = append(body, jen.Id("target").Op("=").Id(n.StateConst(ev.To)))
			}
			if len(ev.In) > 0 {
				body = append(body, jen.Id("within").Op("=").True())
			}
			g.Case(jen.Id(ev.Name)).Block(body...)
		}
		g.Default().Block(unknown)
	})
}
