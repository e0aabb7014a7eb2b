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
	v.pkg, v.kit = v.newScope(), v.newScope()
	for _, d := range ir.KitDecls() {
		v.kit.declare(d.Name, diag.Pos{}, "the test kit's "+d.What+" "+d.Name)
	}
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
	// pkg holds the package-level names of the generated code, kit those
	// of its test kit.
	pkg, kit *scope
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
	case f.Version == nil && f.Misspelt.Has("version"):
	case f.Version == nil:
		v.errs.Add(f.Pos, "missing version: write version: 1 at the top of the schema")
	case f.Version.Value != "1" || f.Version.Tag != "!!int":
		v.errs.Add(f.Version.Pos, "unsupported schema version %q: this ordergen reads version: 1", f.Version.Value)
	}
	switch {
	case f.Package != nil && f.Package.Tag == schema.BadTag:
	case f.Package == nil && f.Misspelt.Has("package"):
	case f.Package == nil:
		v.errs.Add(f.Pos, "missing package: the Go package name of the generated code (e.g. package: ledger)")
	case !token.IsIdentifier(f.Package.Value) || token.IsKeyword(f.Package.Value) ||
		f.Package.Value != strings.ToLower(f.Package.Value) || f.Package.Value == "_":
		v.errs.Add(f.Package.Pos, "package %q is not a valid Go package name: use a lower-case identifier that is not a keyword", f.Package.Value)
	default:
		pkg.Name = f.Package.Value
	}
	pkg.Out = v.out(f.Out)
	pkg.Doc = docText(f.Doc)
	defaults := v.overlay(builtinPolicy(), f.Defaults)
	v.checkPolicy(defaults)
	v.scopeCheck(defaults, f.Defaults)
	if len(f.Entities) == 0 && !f.EntitiesBad && !f.Misspelt.Has("entities") {
		v.errs.Add(f.Pos, "no entities: a schema declares at least one entity under entities:")
	}
	rule := v.wireRule(f.WireNames, wireRules["go"])
	for _, e := range f.Entities {
		pkg.Entities = append(pkg.Entities, v.entity(e, defaults, rule))
	}
	v.brokerClashes(f)
	return pkg
}

// declare takes the top-level names generated for e (ir.Entity.Decls, the
// only list of them) in the scopes of the packages that declare them, each
// at the position of the entity, state or event it is made from. Names
// made from an invalid name are left out: that name is reported already.
func (v *validator) declare(se *schema.Entity, e *ir.Entity) {
	states, events := make(map[string]diag.Pos), make(map[string]diag.Pos)
	for _, s := range se.States {
		states[s.Value] = s.Pos
	}
	for _, b := range se.Branches {
		states[b.Name.Value] = b.Name.Pos
	}
	for _, ev := range se.Events {
		events[ev.Name.Value] = ev.Name.Pos
	}
	entityOK := exported(e.Name)
	for _, d := range e.Decls() {
		var at diag.Pos
		var what string
		switch d.Role {
		case ir.RoleEvent:
			if !exported(d.From) {
				continue
			}
			at, what = events[d.From], "event "+d.Name+" of entity "+e.Name
		case ir.RoleStateConst:
			at, what = states[d.From], "the generated constant "+d.Name+" of state "+d.From
		default:
			at, what = se.Name.Pos, "the generated "+d.What+" "+d.Name+" of entity "+e.Name
		}
		if !entityOK && d.Role != ir.RoleEvent {
			continue
		}
		if d.In&ir.Gen != 0 {
			v.pkg.declare(d.Name, at, what)
		}
		if d.In&ir.Kit != 0 {
			v.kit.declare(d.Name, at, what)
		}
	}
}

func (v *validator) entity(e *schema.Entity, defaults policy, fileRule func(string) string) *ir.Entity {
	name := e.Name.Value
	out := &ir.Entity{Name: name, Names: ir.NamesOf(name), Doc: docText(e.Doc)}
	v.checkExported(name, e.Name.Pos, "entity name")
	rule := v.wireRule(e.WireNames, fileRule)
	v.key(e, out, rule)
	v.version(e, out, rule)
	v.states(e, out)

	p := v.overlay(defaults, &e.Policies)
	v.checkPolicy(p)
	v.scopeCheck(p, &e.Policies)
	if pos, ok := e.Policies.Group("resequencer"); ok && e.Version == nil && !e.Misspelt.Has("version") {
		v.errs.Add(pos, "resequencer needs a version: entity %s has none, so no event is ever held back", name)
	}
	out.Policy = p.resolve()
	pol := &out.Policy

	if c := e.Conflate; c != nil {
		if c.Tag != "!!bool" {
			v.errs.Add(c.Pos, "conflate must be true or false, not %q", c.Value)
		} else {
			out.Conflate = strings.EqualFold(c.Value, "true")
		}
	}

	if len(e.Events) == 0 && !e.EventsBad && !e.Misspelt.Has("events") {
		p := e.EventsPos
		if p.Line == 0 {
			p = e.Name.Pos
		}
		v.errs.Add(p, "entity %s has no events: declare at least one under events:", name)
	}
	v.toWithoutStates(e)
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
	v.patterns(e, out, pol)
	v.brokers(e, out)
	v.within(e, out)
	v.declare(e, out)
	return out
}

func (v *validator) key(e *schema.Entity, out *ir.Entity, rule func(string) string) {
	k := e.Key
	if k == nil {
		if e.Misspelt.Has("key") {
			return
		}
		v.errs.Add(e.Name.Pos, "entity %s needs a key: write key: {field: %sID, type: string}", e.Name.Value, e.Name.Value)
		return
	}
	if k.Bad {
		return
	}
	if k.Field == nil {
		if !k.Misspelt.Has("field") {
			v.errs.Add(k.Pos, "key needs a field: the name of the key field of every event")
		}
	} else if k.Field.Tag == schema.BadTag {
	} else if v.checkExported(k.Field.Value, k.Field.Pos, "key field") {
		out.Key.Name = k.Field.Value
		out.Key.Wire = v.wireName(k.Field.Value, k.Wire, rule)
	}
	if k.Type == nil {
		if !k.Misspelt.Has("type") {
			v.errs.Add(k.Pos, "key needs a type: string or an integer type")
		}
		return
	}
	if k.Type.Tag == schema.BadTag {
		return
	}
	t, err := parseType(k.Type.Value)
	switch {
	case err != nil:
		v.errs.Add(k.Type.Pos, "%s", typeProblem("key", k.Type.Value, err, keyTypes()))
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
		if !d.Misspelt.Has("field") {
			v.errs.Add(d.Pos, "version needs a field: the name of the version field of every event (e.g. version: {field: Version})")
		}
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
			v.errs.Add(d.Type.Pos, "%s", typeProblem("version", d.Type.Value, err, keyTypes()[1:]))
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

// docText returns the text of a doc: value, its lines' trailing spaces and
// its surrounding blank lines trimmed; "" for none.
func docText(s *schema.Scalar) string {
	if s == nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(s.Value), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
