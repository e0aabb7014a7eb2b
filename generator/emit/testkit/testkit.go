package testkit

import (
	"fmt"

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
	ex := k.pkg.Entities[0] // the example entity
	e, n := ex.Name, ex.Names
	f.PackageComment("")
	f.PackageComment(fmt.Sprintf("For each entity (%s below) it has a recorder, %s, %s %s", e, n.Recorder, article(n.Handler), n.Handler))
	f.PackageComment("that records every event it handled; a harness, " + n.Harness + ", that delivers")
	f.PackageComment("events through a real " + n.Dispatcher + " - its lanes, guards and resequencer -")
	f.PackageComment("with the duplicates, redeliveries, reorderings and gaps that a seeded Chaos")
	f.PackageComment("draws; and " + n.ApplyInOrder + ", which delivers the same events once each, in")
	f.PackageComment("order, so that a test can compare the two final states. A harness never asks")
	f.PackageComment("more of the guards than they repair: an entity without a version refuses")
	f.PackageComment("reorderings and gaps, and no key ever holds more events on a version gap")
	f.PackageComment("than the resequencer's bound (MaxHeld).")
	f.PackageComment("")
	f.PackageComment("A test:")
	f.PackageComment("")
	f.PackageComment("\tgot, want := newModel(), newModel()")
	f.PackageComment(fmt.Sprintf("\th, err := %s.%s(got)", k.name, n.NewHarness))
	f.PackageComment("\tif err != nil {")
	f.PackageComment("\t\tt.Fatal(err)")
	f.PackageComment("\t}")
	f.PackageComment("\tdefer h.Close(ctx)")
	f.PackageComment(fmt.Sprintf("\tchaos := %s.Chaos{Seed: 1, Duplicates: 0.2, Redeliveries: 0.1}", k.name))
	f.PackageComment("\tif _, err := h.Deliver(ctx, events, chaos); err != nil {")
	f.PackageComment("\t\tt.Fatal(err)")
	f.PackageComment("\t}")
	f.PackageComment(fmt.Sprintf("\tif err := %s.%s(ctx, want, events); err != nil {", k.name, n.ApplyInOrder))
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

// names are what the kit's emitters of one entity need: the entity and
// its generated names (ir.Names), the kit's and the generated package's.
type names struct {
	ir.Names
	e *ir.Entity
}

func namesOf(e *ir.Entity) names { return names{Names: e.Names, e: e} }

func article(s string) string {
	if s != "" && (s[0] == 'A' || s[0] == 'E' || s[0] == 'I' || s[0] == 'O' || s[0] == 'U') {
		return "an"
	}
	return "a"
}
