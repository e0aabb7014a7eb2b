package testkit

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/ir"
)

// DeliveryPath is the import path of the package that plans and runs
// deliveries for the kit.
const DeliveryPath = emit.RuntimePath + "/delivery"

// Dir returns the name of the kit's sub-directory (and package) for pkg.
func Dir(pkg *ir.Package) string { return pkg.Name + "test" }

// Files returns the kit's files for pkg, whose generated code has the
// import path importPath. Their names are Dir(pkg)/name, sorted.
func Files(pkg *ir.Package, importPath string) ([]emit.File, error) {
	if importPath == "" {
		return nil, fmt.Errorf("test kit of package %s: no import path", pkg.Name)
	}
	k := kit{pkg: pkg, path: importPath, name: Dir(pkg)}
	concerns := []struct {
		name string
		fill func(*jen.File)
	}{
		{"harnesses.go", k.harnesses},
		{"kit.go", k.doc},
		{"recorders.go", k.recorders},
	}
	out := make([]emit.File, 0, len(concerns))
	for _, c := range concerns {
		f := emit.NewFile(k.name)
		f.ImportName(importPath, pkg.Name)
		f.ImportName(DeliveryPath, "delivery")
		emit.ImportNames(f, pkg)
		c.fill(f)
		src, err := emit.Render(c.name, f)
		if err != nil {
			return nil, err
		}
		out = append(out, emit.File{Name: k.name + "/" + c.name, Contents: src})
	}
	return out, nil
}

// kit holds what every part of the kit needs.
type kit struct {
	pkg  *ir.Package
	path string // import path of the generated package
	name string // the kit's package name
}

// gen returns a name of the generated package.
func (k kit) gen(name string) *jen.Statement { return jen.Qual(k.path, name) }

func (k kit) doc(f *jen.File) {
	var entities []string
	for _, e := range k.pkg.Entities {
		entities = append(entities, e.Name)
	}
	f.PackageComment(fmt.Sprintf("Package %s helps test code that uses package %s, as net/http/httptest", k.name, k.pkg.Name))
	f.PackageComment("helps test code that uses net/http.")
	e := k.pkg.Entities[0].Name // the example entity
	f.PackageComment("")
	f.PackageComment(fmt.Sprintf("For each entity (%s below) it has a recorder, %sRecorder, %s %sHandler", e, e, article(e+"Handler"), e))
	f.PackageComment("that records every event it handled; a harness, " + e + "Harness, that delivers")
	f.PackageComment("events through a real " + e + "Dispatcher - its lanes, guards and resequencer -")
	f.PackageComment("with the duplicates, redeliveries, reorderings and gaps that a seeded Chaos")
	f.PackageComment("draws; and Apply" + e + "InOrder, which delivers the same events once each, in")
	f.PackageComment("order, so that a test can compare the two final states. A harness never asks")
	f.PackageComment("more of the guards than they repair: an entity without a version refuses")
	f.PackageComment("reorderings and gaps, and no key ever holds more events on a version gap")
	f.PackageComment("than the resequencer's bound (MaxHeld).")
	f.PackageComment("")
	f.PackageComment("A test:")
	f.PackageComment("")
	f.PackageComment("\tgot, want := newModel(), newModel()")
	f.PackageComment(fmt.Sprintf("\th, err := %s.New%sHarness(got)", k.name, e))
	f.PackageComment("\tif err != nil {")
	f.PackageComment("\t\tt.Fatal(err)")
	f.PackageComment("\t}")
	f.PackageComment("\tdefer h.Close(ctx)")
	f.PackageComment(fmt.Sprintf("\tchaos := %s.Chaos{Seed: 1, Duplicates: 0.2, Redeliveries: 0.1}", k.name))
	f.PackageComment("\tif _, err := h.Deliver(ctx, events, chaos); err != nil {")
	f.PackageComment("\t\tt.Fatal(err)")
	f.PackageComment("\t}")
	f.PackageComment(fmt.Sprintf("\tif err := %s.Apply%sInOrder(ctx, want, events); err != nil {", k.name, e))
	f.PackageComment("\t\tt.Fatal(err)")
	f.PackageComment("\t}")
	f.PackageComment("\t// compare got with want")
	f.PackageComment("")
	f.PackageComment("With a version, Chaos may also reorder events (Reorder) and open version")
	f.PackageComment("gaps (Gaps).")
	f.PackageComment("")
	f.PackageComment(fmt.Sprintf("Entities: %s.", joinNames(entities)))

	f.Comment("Chaos says how a harness's delivery departs from publication order: its")
	f.Comment("seed, and how many duplicates, redeliveries, reorderings and gaps it")
	f.Comment("draws. The zero Chaos delivers every event once, in order.")
	f.Type().Id("Chaos").Op("=").Qual(DeliveryPath, "Chaos")
	f.Line()
	f.Comment("Kind tells why an event was delivered: First, Duplicate or Redelivery.")
	f.Type().Id("Kind").Op("=").Qual(DeliveryPath, "Kind")
	f.Line()
	f.Const().Defs(
		jen.Comment("First is an event's first delivery."),
		jen.Id("First").Op("=").Qual(DeliveryPath, "First"),
		jen.Comment("Duplicate is a second delivery of an event."),
		jen.Id("Duplicate").Op("=").Qual(DeliveryPath, "Duplicate"),
		jen.Comment("Redelivery is a stale copy of an event already applied."),
		jen.Id("Redelivery").Op("=").Qual(DeliveryPath, "Redelivery"),
	)
	f.Line()
	f.Comment("ErrUnrepairable is returned by Deliver for a Chaos that the entity's")
	f.Comment("guards cannot repair: a reordering or a gap on an entity without a")
	f.Comment("version, or a reordering beyond the resequencer's bound.")
	f.Var().Id("ErrUnrepairable").Op("=").Qual(DeliveryPath, "ErrUnrepairable")
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " and "
		default:
			out += ", "
		}
		out += n
	}
	return out
}

// names are the identifiers of one entity in the kit and in the generated
// package.
type names struct {
	e          *ir.Entity
	Recorder   string
	Harness    string
	Delivery   string
	InOrder    string
	Sequence   string
	value      string
	snapshot   string
	Event      string
	Handler    string
	Dispatcher string
	Option     string
	Config     string
}

func namesOf(e *ir.Entity) names {
	lc := lower(e.Name)
	return names{
		e:          e,
		Recorder:   e.Name + "Recorder",
		Harness:    e.Name + "Harness",
		Delivery:   e.Name + "Delivery",
		InOrder:    "Apply" + e.Name + "InOrder",
		Sequence:   "Sequence" + e.Name,
		value:      lc + "Value",
		snapshot:   lc + "Snapshot",
		Event:      e.Name + "Event",
		Handler:    e.Name + "Handler",
		Dispatcher: e.Name + "Dispatcher",
		Option:     e.Name + "Option",
		Config:     e.Name + "Config",
	}
}

func lower(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func article(s string) string {
	if s != "" && (s[0] == 'A' || s[0] == 'E' || s[0] == 'I' || s[0] == 'O' || s[0] == 'U') {
		return "an"
	}
	return "a"
}
