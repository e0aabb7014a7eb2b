package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

func events(f *jen.File, pkg *ir.Package) {
	packageDoc(f, pkg)
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		var evNames []string
		for _, ev := range e.Events {
			evNames = append(evNames, ev.Name)
		}
		Doc(f, 0, "%s is an event of entity %s: %s. The interface is sealed: only "+
			"the event types generated in this package implement it.%s", n.Event, e.Name, list(evNames, "or"), paragraph(e.Doc))
		f.Type().Id(n.Event).InterfaceFunc(func(g *jen.Group) {
			Doc(g, 1, "EventName returns the event's name as declared in the schema.")
			g.Id("EventName").Params().String()
			Doc(g, 1, "EventKey returns the key of the %s the event belongs to (its %s field).", e.Name, e.Key.Name)
			g.Id("EventKey").Params().Add(n.key())
			if e.Version != nil {
				Doc(g, 1, "EventVersion returns the event's version (its %s field).", e.Version.Name)
				g.Id("EventVersion").Params().Uint64()
			}
			g.Id(n.Seal).Params()
		})
		if len(e.States) > 0 || len(e.Branches) > 0 {
			stateType(f, n)
		}
		for _, ev := range e.Events {
			event(f, n, ev)
		}
	}
}

// stateType emits the entity's typed state: a string type, so that the
// stores' values convert as they are, with a constant per state.
func stateType(f *jen.File, n names) {
	e := n.e
	var branches strings.Builder
	for _, b := range e.Branches {
		fmt.Fprintf(&branches, " the branch state %s is entered only from %s;", b.Name, list(b.From, "or"))
	}
	Doc(f, 0, "%s is a state of %s %s. Its ranked states, %s, only move "+
		"forward, in that order (a later state may be skipped);%s the zero value "+
		"means no event has set a state yet.", n.State, Article(e.Name), e.Name, list(e.States, "and"), branches.String())
	f.Type().Id(n.State).String()
	f.Line()
	Doc(f, 0, "The states of %s %s, as the schema declares them.", Article(e.Name), e.Name)
	f.Const().DefsFunc(func(g *jen.Group) {
		for i, s := range e.States {
			Doc(g, 1, "%s is the ranked state %s (rank %d).%s", n.StateConst(s), s, i+1, sentence(e.StateDocs[s]))
			g.Id(n.StateConst(s)).Id(n.State).Op("=").Lit(s)
		}
		for _, b := range e.Branches {
			Doc(g, 1, "%s is the branch state %s.%s", n.StateConst(b.Name), b.Name, sentence(e.StateDocs[b.Name]))
			g.Id(n.StateConst(b.Name)).Id(n.State).Op("=").Lit(b.Name)
		}
	})
	f.Line()
	Doc(f, 0, "String returns the state's name as the schema declares it, \"\" for none.")
	f.Func().Params(jen.Id("s").Id(n.State)).Id("String").Params().String().Block(jen.Return(jen.String().Call(jen.Id("s"))))
}

func event(f *jen.File, n names, ev *ir.Event) {
	e := n.e
	text := fmt.Sprintf("%s is an event of entity %s.%s", ev.Name, e.Name, sentence(ev.Doc))
	switch {
	case e.Version != nil && ev.Snapshot:
		text += " It is a snapshot: it carries the full state, so it is applied " +
			"even across a version gap (the newer state wins)."
	case e.Version != nil:
		text += " It is a delta: it is applied only right after the version before it."
	}
	text += stateSentences(e, ev)
	Doc(f, 0, "%s", text)
	f.Type().Id(ev.Name).StructFunc(func(g *jen.Group) {
		Doc(g, 1, "%s is the key of the %s this event belongs to.", e.Key.Name, e.Name)
		g.Id(e.Key.Name).Add(n.key()).Add(wireTag(e.Key))
		if e.Version != nil {
			Doc(g, 1, "%s is the %s's version after this event: 1 for its first event, "+
				"then one more for each event.", e.Version.Name, e.Name)
			g.Id(e.Version.Name).Add(typ(e.Version.Type)).Add(wireTag(*e.Version))
		}
		for _, fl := range ev.Fields {
			if fl.Doc != "" {
				Doc(g, 1, "%s", fl.Doc)
			} else {
				Doc(g, 1, "%s is declared in the schema as %s.", fl.Name, fl.Type)
			}
			g.Id(fl.Name).Add(typ(fl.Type)).Add(wireTag(fl))
		}
	})
	f.Line()
	Doc(f, 0, "EventName returns %q.", ev.Name)
	f.Func().Params(jen.Id(ev.Name)).Id("EventName").Params().String().Add(oneLine(jen.Return(jen.Lit(ev.Name))))
	f.Line()
	Doc(f, 0, "EventKey returns e.%s.", e.Key.Name)
	f.Func().Params(jen.Id("e").Id(ev.Name)).Id("EventKey").Params().Add(n.key()).Add(oneLine(jen.Return(jen.Id("e").Dot(e.Key.Name))))
	if e.Version != nil {
		f.Line()
		Doc(f, 0, "EventVersion returns e.%s.", e.Version.Name)
		f.Func().Params(jen.Id("e").Id(ev.Name)).Id("EventVersion").Params().Uint64().Add(oneLine(jen.Return(versionExpr(e, jen.Id("e")))))
	}
	f.Line()
	f.Func().Params(jen.Id(ev.Name)).Id(n.Seal).Params().Block()
}

// oneLine returns the body of a function of one statement, written on the
// function's line, as gofmt keeps it.
func oneLine(stmt jen.Code) *jen.Statement {
	return jen.Custom(jen.Options{Open: "{ ", Close: " }"}, stmt)
}

// wireTag returns the struct tag that gives f its wire name in the JSON
// codec, or nothing when the wire name is the Go name (the default, which
// events encoded before wire names existed use).
func wireTag(f ir.Field) jen.Code {
	if f.Wire == "" || f.Wire == f.Name {
		return jen.Null()
	}
	return jen.Tag(map[string]string{"json": f.Wire})
}

// sentence returns doc, a description from the schema, as the sentences
// that follow a generated one: "" for none.
func sentence(doc string) string {
	if doc == "" {
		return ""
	}
	return " " + doc
}

// paragraph returns doc, a description from the schema, as a paragraph of
// its own after a generated one: "" for none.
func paragraph(doc string) string {
	if doc == "" {
		return ""
	}
	return "\n\n" + doc
}

// packageDoc writes the generated package's comment: what it holds, the
// schema's description, its entities with theirs, and where to start.
func packageDoc(f *jen.File, pkg *ir.Package) {
	var b strings.Builder
	fmt.Fprintf(&b, "Package %s is generated by ordergen from a schema of events. For each entity "+
		"it has the events as Go types, a handler interface with one method per event, and a "+
		"dispatcher that handles them on per-key lanes: the events of one key one at a time, in "+
		"publication order, behind the schema's version and state guards; different keys in "+
		"parallel.", pkg.Name)
	b.WriteString(paragraph(pkg.Doc))
	b.WriteString("\n\nEntities:\n")
	for _, e := range pkg.Entities {
		item := fmt.Sprintf("%s (%s, %s)", e.Name, e.Names.Handler, e.Names.Dispatcher)
		if e.Doc != "" {
			item += ": " + e.Doc
		}
		b.WriteString(listItem(item))
	}
	first := pkg.Entities[0].Names
	fmt.Fprintf(&b, "\nStart with %s and its Publish methods. Do not edit these files: edit the "+
		"schema and generate again (go generate, or ordergen generate).", first.NewDispatcher)
	f.PackageComment(Wrap(0, b.String()))
}

// listItem returns text as an item of a list in a doc comment at the top
// level ("  - text"), wrapped to lineWidth with its later lines indented
// under the first, each line ending in a newline.
func listItem(text string) string {
	var b strings.Builder
	for i, line := range fill(strings.Fields(text), lineWidth-len("//   - ")) {
		line = strings.TrimPrefix(line, "// ")
		if i == 0 {
			b.WriteString("  - " + line + "\n")
		} else {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// stateSentences says, for ev's comment, how the state guard treats it: the
// state it moves its entity to, and what becomes of it in that state
// already (it applies with a version, it is a duplicate without one); or
// the states it happens within (in:).
func stateSentences(e *ir.Entity, ev *ir.Event) string {
	switch {
	case len(ev.In) > 0:
		return fmt.Sprintf(" It happens within state %s, without moving the %s: the state "+
			"guard skips it while the %s is in any other state (or none yet).", list(ev.In, "or"), e.Name, e.Name)
	case ev.To == "":
		return ""
	}
	text := fmt.Sprintf(" Handling it moves the %s to state %s.", e.Name, ev.To)
	if e.Version != nil {
		text += fmt.Sprintf(" Another %s while the %s is in %s applies too: its version says "+
			"it is newer.", ev.Name, e.Name, ev.To)
	} else {
		text += fmt.Sprintf(" %s has no version: another %s while the %s is in %s already is "+
			"skipped as a duplicate (an event that happens within a state without moving it "+
			"takes in: in the schema, not to:).", e.Name, ev.Name, e.Name, ev.To)
	}
	if r := e.Rank(ev.To); r > 0 && r < len(e.States) {
		text += fmt.Sprintf(" In a state ranked above %s it is skipped as late.", ev.To)
	}
	return text
}
