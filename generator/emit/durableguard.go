package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// handleTx emits the engine handler of a transactional subscriber: the
// guards of handle, with the version and state read, and stored, in the
// transaction the handler writes in.
func handleTx(f *jen.File, n names) {
	e := n.e
	versioned := e.Version != nil
	snapshots := versioned && e.HasSnapshot()
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "

	guards := ""
	if versioned || stated {
		guards = " applies the guards of handle,"
	}
	Doc(f, 0, "handleTx is the engine handler of a transactional %s subscriber. It "+
		"begins a transaction of the subscriber's store, in which the key's version "+
		"and state are read (and locked),%s calls the handler with the transaction "+
		"and commits its writes together with the new version and state. An event "+
		"the handler does not implement (runtime.ErrUnimplemented) commits the "+
		"advance alone and is skipped; any other error rolls back.", e.Name, guards)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("handleTx").Params(ctx, jen.Id("key").Add(n.key()), jen.Id("ev").Id(n.Event)).Error().BlockFunc(func(g *jen.Group) {
		unknown := unknownEvent(n)
		if versioned || stated {
			guardFacts(g, n, snapshots, unknown)
		}

		g.List(jen.Id("tx"), jen.Err()).Op(":=").Id("s").Dot("tx").Dot("store").Dot("BeginKey").Call(jen.Id("ctx"), jen.Id("s").Dot("name"), keyText(n))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(errorf(keyFmt+"%w", jen.Id("key"), jen.Err())))
		g.Defer().Id("tx").Dot("Rollback").Call()

		storedVersion := jen.Id("tx").Dot("Version").Call()
		if versioned {
			g.Id("stored").Op(":=").Id("tx").Dot("Version").Call()
			storedVersion = jen.Id("stored")
			g.Add(checkVersion(snapshots))
		}
		newVersion := storedVersion
		if versioned {
			newVersion = jen.Id("version")
		}
		current := jen.Id("tx").Dot("State").Call()
		if stated {
			current = jen.String().Call(jen.Id("current"))
		}
		commit := func(what string) jen.Code {
			return jen.If(jen.Err().Op(":=").Id("tx").Dot("Commit").Call(jen.Id("ctx"), newVersion, current), jen.Err().Op("!=").Nil()).Block(
				jen.Return(errorf(keyFmt+what+": %w", jen.Id("key"), jen.Err())),
			)
		}

		if stated {
			g.Id("current").Op(":=").Id(n.State).Call(jen.Id("tx").Dot("State").Call())
			var useVersion jen.Code
			if versioned {
				useVersion = commit("store version")
			}
			g.If(readsState(e)).BlockFunc(func(g *jen.Group) { checkState(g, n, useVersion) })
		}

		var deflt jen.Code
		if !versioned && !stated {
			deflt = unknown
		}
		g.Add(dispatchSwitch(n, func(ev *ir.Event) jen.Code {
			if e.Notification {
				return jen.Id("s").Dot("tx").Dot("h").Dot(n.HandleChanged).Call(jen.Id("ctx"), jen.Id("tx").Dot("Tx").Call(), jen.Id("key"))
			}
			return jen.Id("s").Dot("tx").Dot("h").Dot(ev.Handle).Call(jen.Id("ctx"), jen.Id("tx").Dot("Tx").Call(), jen.Id("e"))
		}, deflt))
		unimplemented(g)
		if stated {
			g.If(jen.Id("target").Op("!=").Lit("")).Block(jen.Id("current").Op("=").Id("target"))
		}
		g.Add(commit("commit"))
		acknowledge(g)
	})
}
