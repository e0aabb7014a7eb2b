package validate

import (
	"errors"

	"github.com/ordergen/ordergen/generator/ir"
)

var errNotString = errors.New("write the type as a string")

// resolve looks up every qualified field type in one Resolver call, fills
// in the package names, and checks that map keys are comparable.
func (v *validator) resolve() {
	var refs []Ref
	index := make(map[Ref]int)
	for _, u := range v.fieldTypes {
		for _, t := range namedRefs(u.t, nil) {
			ref := Ref{Path: t.Path, Name: t.Name}
			if _, known := wellKnown[ref]; known {
				continue
			}
			if _, ok := index[ref]; !ok {
				index[ref] = len(refs)
				refs = append(refs, ref)
			}
		}
	}
	found := make(map[Ref]Resolved, len(refs)+len(wellKnown))
	for ref, r := range wellKnown {
		found[ref] = r
	}
	failed := make(map[Ref]error)
	if len(refs) > 0 {
		var res []Resolved
		var errs []error
		if v.resolver != nil {
			res, errs = v.resolver.Resolve(refs)
		}
		for i, ref := range refs {
			switch {
			case i >= len(res) || i >= len(errs):
				failed[ref] = errors.New("no resolver for types of other packages")
			case errs[i] != nil:
				failed[ref] = errs[i]
			default:
				found[ref] = res[i]
			}
		}
	}
	for _, u := range v.fieldTypes {
		ok := true
		for _, t := range namedRefs(u.t, nil) {
			ref := Ref{Path: t.Path, Name: t.Name}
			if err, bad := failed[ref]; bad {
				v.errs.Add(u.pos, "unresolvable type %s: %v%s", ref, err, suggestType(ref.String(), typeNames()))
				ok = false
				continue
			}
			t.PkgName = found[ref].PkgName
		}
		if ok && !keysComparable(u.t, found) {
			v.errs.Add(u.pos, "field type %s: map keys must be comparable", u.src)
		}
	}
}

func keysComparable(t *ir.Type, found map[Ref]Resolved) bool {
	if t.Kind == ir.Map && (!comparable(t.Key, found) || !keysComparable(t.Key, found)) {
		return false
	}
	if t.Elem != nil {
		return keysComparable(t.Elem, found)
	}
	return true
}
