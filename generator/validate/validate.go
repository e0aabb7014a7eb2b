package validate

import (
	"go/token"
	"path"
	"path/filepath"
	"strings"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// Check validates f and returns its resolved model, or nil and every
// problem found. r resolves qualified field types; with a nil r, any
// qualified type but time.Time and time.Duration is an error.
func Check(f *schema.File, r Resolver) (*ir.Package, diag.List) {
	v := &validator{resolver: r}
	v.pkg = v.newScope()
	pkg := v.file(f)
	v.resolve()
	if v.errs.Len() > 0 {
		return nil, v.errs
	}
	return pkg, v.errs
}

type validator struct {
	errs     diag.List
	resolver Resolver
	// pkg holds the package-level names of the generated code.
	pkg *scope
	// fieldTypes are the parsed field types, to resolve at the end.
	fieldTypes []typeUse
}

// typeUse is a parsed field type and where it was written.
type typeUse struct {
	t   *ir.Type
	src string
	pos diag.Pos
}

func (v *validator) file(f *schema.File) *ir.Package {
	pkg := &ir.Package{}
	switch {
	case f.Version != nil && f.Version.Tag == schema.BadTag:
	case f.Version == nil:
		v.errs.Add(f.Pos, "missing version: write version: 1 at the top of the schema")
	case f.Version.Value != "1" || f.Version.Tag != "!!int":
		v.errs.Add(f.Version.Pos, "unsupported schema version %q: this ordergen reads version: 1", f.Version.Value)
	}
	switch {
	case f.Package != nil && f.Package.Tag == schema.BadTag:
	case f.Package == nil:
		v.errs.Add(f.Pos, "missing package: the Go package name of the generated code (e.g. package: ledger)")
	case !token.IsIdentifier(f.Package.Value) || token.IsKeyword(f.Package.Value) ||
		f.Package.Value != strings.ToLower(f.Package.Value) || f.Package.Value == "_":
		v.errs.Add(f.Package.Pos, "package %q is not a valid Go package name: use a lower-case identifier that is not a keyword", f.Package.Value)
	default:
		pkg.Name = f.Package.Value
	}
	pkg.Out = v.out(f.Out)
	defaults := v.overlay(builtinPolicy(), f.Defaults)
	v.checkPolicy(defaults)
	v.scopeCheck(defaults, f.Defaults)
	if len(f.Entities) == 0 && !f.EntitiesBad {
		v.errs.Add(f.Pos, "no entities: a schema declares at least one entity under entities:")
	}
	rule := v.wireRule(f.WireNames, wireRules["go"])
	for _, e := range f.Entities {
		pkg.Entities = append(pkg.Entities, v.entity(e, defaults, rule))
	}
	return pkg
}

// declareEntity takes the package-level names generated for entity name.
func (v *validator) declareEntity(name string, pos diag.Pos) {
	what := func(kind, n string) string {
		return "the generated " + kind + " " + n + " of entity " + name
	}
	for _, suffix := range []string{"Event", "Handler", "Dispatcher", "Config", "Option", "Publisher", "Codec", "Producer", "Consumer", "TxHandler", "State"} {
		v.pkg.declare(name+suffix, pos, what("type", name+suffix))
	}
	for _, base := range []string{"Unimplemented" + name + "Handler", "Unimplemented" + name + "TxHandler"} {
		v.pkg.declare(base, pos, what("type", base))
	}
	v.pkg.declare("New"+name+"Dispatcher", pos, what("function", "New"+name+"Dispatcher"))
	v.pkg.declare("New"+name+"TxDispatcher", pos, what("function", "New"+name+"TxDispatcher"))
	v.pkg.declare("New"+name+"Producer", pos, what("function", "New"+name+"Producer"))
	lc := lowerFirst(name)
	for _, n := range []string{lc + "Value", lc + "Subscriber", lc + "Rank", lc + "Transition", "default" + name + "Config", lc + "Tx", lc + "UseStore", "check" + name} {
		v.pkg.declare(n, pos, what("name", n))
	}
}

func (v *validator) entity(e *schema.Entity, defaults policy, fileRule func(string) string) *ir.Entity {
	name := e.Name.Value
	out := &ir.Entity{Name: name}
	if v.checkExported(name, e.Name.Pos, "entity name") {
		v.declareEntity(name, e.Name.Pos)
	}
	rule := v.wireRule(e.WireNames, fileRule)
	v.key(e, out, rule)
	v.version(e, out, rule)
	v.states(e, out)

	p := v.overlay(defaults, &e.Policies)
	v.checkPolicy(p)
	v.scopeCheck(p, &e.Policies)
	if r := e.Policies.Resequencer; r != nil && e.Version == nil {
		v.errs.Add(r.Pos, "resequencer needs a version: entity %s has none, so no event is ever held back", name)
	}
	out.Policy = resolvePolicy(p)

	if c := e.Conflate; c != nil {
		if c.Tag != "!!bool" {
			v.errs.Add(c.Pos, "conflate must be true or false, not %q", c.Value)
		} else {
			out.Conflate = strings.EqualFold(c.Value, "true")
		}
	}

	if len(e.Events) == 0 && !e.EventsBad {
		p := e.EventsPos
		if p.Line == 0 {
			p = e.Name.Pos
		}
		v.errs.Add(p, "entity %s has no events: declare at least one under events:", name)
	}
	for _, ev := range e.Events {
		out.Events = append(out.Events, v.event(e, out, ev, rule))
	}
	if out.Conflate && out.Version != nil {
		var deltas []string
		for _, ev := range out.Events {
			if !ev.Snapshot {
				deltas = append(deltas, ev.Name)
			}
		}
		if len(deltas) > 0 {
			v.errs.Add(e.Conflate.Pos, "conflate: true on an entity with a version needs every event to be a snapshot (conflation leaves version gaps that delta events cannot survive); delta events: %s", strings.Join(deltas, ", "))
		}
	}
	return out
}

func (v *validator) key(e *schema.Entity, out *ir.Entity, rule func(string) string) {
	k := e.Key
	if k == nil {
		v.errs.Add(e.Name.Pos, "entity %s needs a key: write key: {field: %sID, type: string}", e.Name.Value, e.Name.Value)
		return
	}
	if k.Bad {
		return
	}
	if k.Field == nil {
		v.errs.Add(k.Pos, "key needs a field: the name of the key field of every event")
	} else if k.Field.Tag == schema.BadTag {
	} else if v.checkExported(k.Field.Value, k.Field.Pos, "key field") {
		out.Key.Name = k.Field.Value
		out.Key.Wire = v.wireName(k.Field.Value, k.Wire, rule)
	}
	if k.Type == nil {
		v.errs.Add(k.Pos, "key needs a type: string or an integer type")
		return
	}
	if k.Type.Tag == schema.BadTag {
		return
	}
	t, err := parseType(k.Type.Value)
	switch {
	case err != nil:
		v.errs.Add(k.Type.Pos, "unknown key type %q: %v%s", k.Type.Value, err, suggestType(k.Type.Value, keyTypes()))
	case t.Kind != ir.Builtin || t.Name != "string" && !integers[t.Name]:
		v.errs.Add(k.Type.Pos, "unusable key type %s: a key must be a string or an integer type", k.Type.Value)
	default:
		out.Key.Type = t
	}
}

func (v *validator) version(e *schema.Entity, out *ir.Entity, rule func(string) string) {
	d := e.Version
	if d == nil {
		return
	}
	f := &ir.Field{Type: &ir.Type{Kind: ir.Builtin, Name: "uint64"}}
	out.Version = f
	if d.Bad {
		return
	}
	if d.Field == nil {
		v.errs.Add(d.Pos, "version needs a field: the name of the version field of every event (e.g. version: {field: Version})")
	} else if d.Field.Tag == schema.BadTag {
	} else if v.checkExported(d.Field.Value, d.Field.Pos, "version field") {
		f.Name = d.Field.Value
		f.Wire = v.wireName(d.Field.Value, d.Wire, rule)
		if e.Key != nil && e.Key.Field != nil && e.Key.Field.Value == f.Name {
			v.errs.Add(d.Field.Pos, "version field %s has the same name as the key field", f.Name)
		}
	}
	if d.Type != nil && d.Type.Tag != schema.BadTag {
		t, err := parseType(d.Type.Value)
		switch {
		case err != nil:
			v.errs.Add(d.Type.Pos, "unknown version type %q: %v%s", d.Type.Value, err, suggestType(d.Type.Value, keyTypes()[1:]))
		case t.Kind != ir.Builtin || !integers[t.Name]:
			v.errs.Add(d.Type.Pos, "unusable version type %s: a version must be an integer type", d.Type.Value)
		default:
			f.Type = t
		}
	}
}

// out checks the output folder a schema names: a relative path inside the
// schema's folder, written with slashes.
func (v *validator) out(s *schema.Scalar) string {
	if s == nil || s.Tag == schema.BadTag {
		return ""
	}
	clean := path.Clean(s.Value)
	if s.Tag != "!!str" || s.Value == "" || !filepath.IsLocal(filepath.FromSlash(clean)) || strings.Contains(s.Value, "\\") || clean == "." {
		v.errs.Add(s.Pos, "out must be a folder inside the schema's folder, written with slashes and without .. (out: gen), not %q", s.Value)
		return ""
	}
	return clean
}
