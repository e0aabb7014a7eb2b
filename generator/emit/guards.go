package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func guards(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		if e.HasStateGuard() {
			rank(f, n)
			transition(f, n)
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
		text += " The state guard skips a transition to a state that ranks below or equal to " +
			"the current one, and a branch state entered from a state it does not list."
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
			g.If(jen.Id("target").Op("!=").Lit("")).BlockFunc(func(g *jen.Group) {
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
			g.If(jen.Id("target").Op("!=").Lit("")).Block(
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
// happen.
func transition(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns why %s %s in state current must not move to target, "+
		"or \"\" when it may. Ranked states only move forward; a branch state is "+
		"entered only from the states it lists, and no ranked state follows it.", n.Transition, Article(e.Name), e.Name)
	f.Func().Id(n.Transition).Params(jen.List(jen.Id("current"), jen.Id("target")).Id(n.State)).String().BlockFunc(func(g *jen.Group) {
		if len(e.Branches) > 0 {
			g.Switch(jen.Id("target")).BlockFunc(func(g *jen.Group) {
				for _, b := range e.Branches {
					g.Case(jen.Id(n.StateConst(b.Name))).Block(
						jen.Switch(jen.Id("current")).Block(
							jen.CaseFunc(func(g *jen.Group) {
								for _, s := range b.From {
									g.Id(n.StateConst(s))
								}
							}).Block(jen.Return(jen.Lit(""))),
							jen.Case(jen.Id(n.StateConst(b.Name))).Block(jen.Return(jen.Lit("already in state "+b.Name))),
						),
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
			g.Case(jen.Id("from").Op("<").Id("to")).Block(jen.Return(jen.Lit("")))
			g.Case(jen.Id("from").Op("==").Id("to")).Block(jen.Return(jen.Lit("already in state ").Op("+").String().Call(jen.Id("target"))))
		})
		g.Return(jen.Lit("late transition: state ").Op("+").String().Call(jen.Id("target")).Op("+").Lit(" ranks below ").Op("+").String().Call(jen.Id("current")))
	})
}

// checkState emits the state guard's checks of current against target: a
// stored state the entity does not have fails for good; a transition that
// must not happen is skipped, after useVersion (if any) stored the event's
// version, since a skipped transition still uses up its version or the
// next one would wait for it forever.
func checkState(g *jen.Group, n names, useVersion jen.Code) {
	e := n.e
	g.If(jen.Id(n.Rank).Call(jen.Id("current")).Op("==").Lit(-2)).Block(jen.Return(rt("Permanent").Call(
		errorf(n.pkg()+": "+e.Name+" %v: stored state %q is not a state of "+e.Name, jen.Id("key"), jen.Id("current")),
	)))
	// With the version stored, the skip is runtime.SkipApplied: events held
	// on the gap it filled are due again.
	skip := []jen.Code{jen.Return(rt("Skip").Call(jen.Id("reason")))}
	if useVersion != nil {
		skip = []jen.Code{useVersion, jen.Return(rt("SkipApplied").Call(jen.Id("reason")))}
	}
	g.If(jen.Id("reason").Op(":=").Id(n.Transition).Call(jen.Id("current"), jen.Id("target")), jen.Id("reason").Op("!=").Lit("")).Block(skip...)
}

// checkVersion returns the version guard's statement: the runtime decides
// (runtime.CheckVersion) from version, stored and, where the entity has
// snapshots, snapshot.
func checkVersion(snapshots bool) jen.Code {
	snapshot := jen.False()
	if snapshots {
		snapshot = jen.Id("snapshot")
	}
	return jen.If(
		jen.Err().Op(":=").Add(rt("CheckVersion")).Call(jen.Id("version"), jen.Id("stored"), snapshot),
		jen.Err().Op("!=").Nil(),
	).Block(jen.Return(jen.Err()))
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
			g.Case(jen.Id(ev.Name)).Block(body...)
		}
		g.Default().Block(unknown)
	})
}
