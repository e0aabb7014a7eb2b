package emit

import (
	"reflect"

	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// GenImplPath is the import path of the package only generated code
// imports: the generic wiring and the version handshake.
const GenImplPath = RuntimePath + "/genimpl"

func gi(name string) *jen.Statement { return jen.Qual(GenImplPath, name) }

// row returns the keyed elements of fields on one line, as one element of
// a literal written one element a line: "Name: "Account", Group: true".
// Fields with a nil Value are left out; nil for none.
func row(fields ...Field) jen.Code {
	var s *jen.Statement
	for _, f := range fields {
		if f.Value == nil {
			continue
		}
		if s == nil {
			s = jen.Id(f.Name).Op(":").Add(f.Value)
		} else {
			s.Op(",").Id(f.Name).Op(":").Add(f.Value)
		}
	}
	if s == nil {
		return nil
	}
	return s
}

// lines returns the braces of a literal whose elements are written one a
// line, the nil ones left out.
func lines(items ...jen.Code) *jen.Statement {
	var kept []jen.Code
	for _, it := range items {
		if it != nil {
			kept = append(kept, it)
		}
	}
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, kept...)
}

// flag returns true's code when b is set, nil otherwise (a field left out).
func flag(b bool) jen.Code {
	if b {
		return jen.True()
	}
	return nil
}

// lit returns s's literal, nil for "" (a field left out).
func lit(s string) jen.Code {
	if s == "" {
		return nil
	}
	return jen.Lit(s)
}

// strings returns the literal of a []string, nil for none.
func stringsLit(items []string) jen.Code {
	if len(items) == 0 {
		return nil
	}
	var vs []jen.Code
	for _, s := range items {
		vs = append(vs, jen.Lit(s))
	}
	return jen.Index().String().Values(vs...)
}

// entity emits the description of e that the generic wiring of
// runtime/genimpl works from: its names, states, events' rules and
// policies.
func entity(f *jen.File, pkg string, n names) {
	e := n.e
	wrap := body(f, n)
	Doc(f, 0, "%s describes %s to the generic wiring of runtime/genimpl: its names, its "+
		"states, its events' rules (kind, target state, in:, Go type) and the schema's "+
		"policies, "+
		"which every %s starts from.", n.Entity, e.Name, n.Config)
	var version, versionField, signed jen.Code
	if v := e.Version; v != nil {
		versionField = jen.Lit(v.Name)
		version = jen.Id(n.Event).Dot("EventVersion")
		if !unsigned(v.Type) {
			signed = jen.True()
		}
	}
	var branches jen.Code
	if len(e.Branches) > 0 {
		var bs []jen.Code
		for _, b := range e.Branches {
			bs = append(bs, jen.Values(row(Field{"Name", jen.Lit(b.Name)}, Field{"From", stringsLit(b.From)})))
		}
		branches = jen.Id("Branches").Op(":").Index().Add(gi("Branch")).Values(bs...)
	}
	var rules []jen.Code
	for _, ev := range e.Events {
		rules = append(rules, jen.Values(row(
			Field{"Name", jen.Lit(ev.Name)},
			Field{"Snapshot", flag(ev.Snapshot && e.Version != nil)},
			Field{"To", lit(ev.To)},
			Field{"In", stringsLit(ev.In)},
			Field{"Type", gi("Of").Types(jen.Id(ev.Name), jen.Id(n.Event)).Call()},
		)))
	}
	f.Var().Id(n.Entity).Op("=").Op("&").Add(gi("Entity")).Types(n.key(), jen.Id(n.Event), n.bodyType()).Add(lines(append([]jen.Code{
		row(Field{"Package", jen.Lit(pkg)}, Field{"Name", jen.Lit(e.Name)}, Field{"KeyField", jen.Lit(e.Key.Name)}, Field{"VersionField", versionField}),
		row(Field{"Version", version}, Field{"SignedVersion", signed}),
		row(Field{"States", stringsLit(e.States)}),
		branches,
		jen.Id("Events").Op(":").Index().Add(gi("EventRule")).Types(jen.Id(n.Event)).Add(lines(rules...)),
		row(Field{"Conflate", flag(e.Conflate)}, Field{"Batch", flag(e.Batch)}, Field{"Notification", flag(e.Notification)},
			Field{"Resync", flag(e.Resync)}, Field{"Group", flag(grouped(e))}),
		jen.Id("Defaults").Op(":").Id(n.Config).Add(defaults(e)),
	}, wrap...)...))
}

// defaults returns the literal of e's Config with the schema's policies,
// each on a line of its own.
func defaults(e *ir.Entity) *jen.Statement {
	var items []jen.Code
	for _, pf := range e.PolicyFields() {
		items = append(items, row(Field{pf.Name, inlineValue(reflect.ValueOf(pf.Value))}))
	}
	if grouped(e) {
		gp := e.Policy.Group
		var linger, maxEvents jen.Code
		if gp.Linger > 0 {
			linger = duration(gp.Linger)
		}
		if gp.MaxEvents > 0 {
			maxEvents = jen.Lit(gp.MaxEvents)
		}
		items = append(items, row(Field{"Group", gi("GroupConfig").Values(row(Field{"MaxEvents", maxEvents}, Field{"Linger", linger}))}))
	}
	return lines(items...)
}

// inlineValue is policyValue with a struct's fields on one line.
func inlineValue(v reflect.Value) jen.Code {
	t := v.Type()
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[struct{}]() {
		return policyValue(v)
	}
	var fields []Field
	for i := range t.NumField() {
		if f := v.Field(i); t.Field(i).IsExported() && (!f.IsZero() || isRuntimePolicy(f.Type())) {
			fields = append(fields, Field{t.Field(i).Name, policyValue(f)})
		}
	}
	return goType(t).Values(row(fields...))
}
