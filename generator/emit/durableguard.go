package emit

import (
	"github.com/dave/jennifer/jen"
)

// handleTx emits the engine handler of a transactional subscriber: the
// guards of handle, with the version and state read, and stored, in the
// transaction the handler writes in.
func handleTx(f *jen.File, n names) {
	e := n.e
	versioned := e.Version != nil
	snapshots := versioned && anySnapshot(e)
	stated := e.HasStateGuard()
	keyFmt := n.pkg() + ": " + e.Name + " %v: "

	f.Commentf("handleTx is the engine handler of a transactional %s subscriber. It", e.Name)
	f.Comment("begins a transaction of the subscriber's store, in which the key's version")
	f.Comment("and state are read (and locked),")
	if versioned || stated {
		f.Comment("applies the guards of handle,")
	}
	f.Comment("calls the handler with the transaction and commits its writes together with")
	f.Comment("the new version and state. Anything but success rolls back.")
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("s").Op("*").Id(n.subscriber)).Id("handleTx").Params(ctx, jen.Id("key").Add(n.key()), jen.Id("env").Id(n.envelope)).Error().BlockFunc(func(g *jen.Group) {
		empty := jen.Return(rt("Permanent").Call(errorf(keyFmt+"empty event envelope", jen.Id("key"))))
		guardFacts(g, n, snapshots, empty)

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
		commit := func(state jen.Code, what string) jen.Code {
			return jen.If(jen.Err().Op(":=").Id("tx").Dot("Commit").Call(jen.Id("ctx"), newVersion, state), jen.Err().Op("!=").Nil()).Block(
				jen.Return(errorf(keyFmt+what+": %w", jen.Id("key"), jen.Err())),
			)
		}

		g.Id("current").Op(":=").Id("tx").Dot("State").Call()
		if stated {
			var useVersion jen.Code
			if versioned {
				useVersion = commit(jen.Id("current"), "store version")
			}
			g.If(jen.Id("target").Op("!=").Lit("")).BlockFunc(func(g *jen.Group) { checkState(g, n, useVersion) })
		}

		g.Switch(jen.Id("env").Dot("kind")).BlockFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				g.Case(jen.Id(n.kindOf(ev))).Block(jen.Err().Op("=").Id("s").Dot("tx").Dot("h").Dot("Handle"+ev.Name).Call(jen.Id("ctx"), jen.Id("tx").Dot("Tx").Call(), jen.Id("env").Dot(field(ev))))
			}
		})
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		if stated {
			g.If(jen.Id("target").Op("!=").Lit("")).Block(jen.Id("current").Op("=").Id("target"))
		}
		g.Add(commit(jen.Id("current"), "commit"))
		g.Return(jen.Nil())
	})
}
