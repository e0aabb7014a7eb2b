package testkit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/write"
)

// DeliveryPath is the import path of the package that plans and runs
// deliveries for the kit.
const DeliveryPath = emit.RuntimePath + "/delivery"

// Dir returns the name of the kit's sub-directory (and package) for pkg.
func Dir(pkg *ir.Package) string { return pkg.Name + "test" }

// Files returns the kit's files for pkg, whose generated code has the
// import path importPath. Their names are Dir(pkg)/name, sorted.
func Files(pkg *ir.Package, importPath string) ([]write.File, error) {
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
	out := make([]write.File, 0, len(concerns))
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
		out = append(out, write.File{Name: k.name + "/" + c.name, Contents: src})
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
	ex := k.pkg.Entities[0] // the example entity
	n := ex.Names
	f.PackageComment(emit.Wrap(0, fmt.Sprintf(`Package %[1]s helps test code that uses package %[2]s, as net/http/httptest
helps test code that uses net/http.

For each entity (%[3]s below) it has a recorder, %[4]s, %[5]s %[6]s
that records every event it handled; a harness, %[7]s, that delivers
events through a real %[8]s - its lanes, guards and resequencer -
with the duplicates, redeliveries, reorderings and gaps that a seeded Chaos
draws; and %[9]s, which delivers the same events once each, in
order, so that a test can compare the two final states. The in-order run is
the oracle, so it fails (ErrSkippedInOrder) when the guards skip one of its
events: in publication order that is almost always a schema mistake, which
a chaotic delivery through the same guards repeats. A harness never asks
more of the guards than they repair: an entity without a version refuses
reorderings (but for notifications, whose order does not matter) and gaps,
no key ever holds more events on a version gap than
the resequencer's bound (MaxHeld), and only an entity that resyncs a key
whose bound is hit (on_gap: resync) loses events.

A test:

	got, want := newModel(), newModel()
	h, err := %[1]s.%[10]s(got)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	chaos := %[1]s.Chaos{Seed: 1, Duplicates: 0.2, Redeliveries: 0.1}
	if _, err := h.Deliver(ctx, events, chaos); err != nil {
		t.Fatal(err)
	}
	if err := %[1]s.%[9]s(ctx, want, events); err != nil {
		t.Fatal(err)
	}
	// compare got with want

With a version, Chaos may also reorder events (Reorder) and open version
gaps (Gaps); with on_gap: resync, lose events (Losses): the handler's
Resync method then brings the key up to date from the source of truth.

Entities: %[11]s.`, k.name, k.pkg.Name, ex.Name, n.Recorder, emit.Article(n.Handler), n.Handler,
		n.Harness, n.Dispatcher, n.ApplyInOrder, n.NewHarness, joinNames(entities))))

	emit.Doc(f, 0, "Chaos says how a harness's delivery departs from publication order: its "+
		"seed, and how many duplicates, redeliveries, reorderings, gaps and lost "+
		"events it draws. The zero Chaos delivers every event once, in order.")
	f.Type().Id("Chaos").Op("=").Qual(DeliveryPath, "Chaos")
	f.Line()
	emit.Doc(f, 0, "Kind tells why an event was delivered (First, Duplicate or Redelivery), "+
		"or that it was not (Lost).")
	f.Type().Id("Kind").Op("=").Qual(DeliveryPath, "Kind")
	f.Line()
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, c := range []struct{ name, doc string }{
			{"First", "First is an event's first delivery."},
			{"Duplicate", "Duplicate is a second delivery of an event."},
			{"Redelivery", "Redelivery is a stale copy of an event already applied."},
			{"Lost", "Lost is an event that was never delivered."},
		} {
			emit.Doc(g, 1, "%s", c.doc)
			g.Id(c.name).Op("=").Qual(DeliveryPath, c.name)
		}
	})
	f.Line()
	emit.Doc(f, 0, "ErrUnrepairable is returned by Deliver for a Chaos that the entity's "+
		"guards cannot repair: a reordering or a gap on an entity without a "+
		"version, a reordering beyond the resequencer's bound, or a lost event "+
		"for an entity without on_gap: resync.")
	f.Var().Id("ErrUnrepairable").Op("=").Qual(DeliveryPath, "ErrUnrepairable")
	f.Line()
	emit.Doc(f, 0, "ErrSkippedInOrder is what the error of an in-order application "+
		"(ApplyInOrder) wraps when the guards skipped events delivered once each, in "+
		"publication order: almost always a schema mistake, which a chaotic delivery "+
		"through the same guards repeats and so cannot catch.")
	f.Var().Id("ErrSkippedInOrder").Op("=").Qual(DeliveryPath, "ErrSkippedInOrder")
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
