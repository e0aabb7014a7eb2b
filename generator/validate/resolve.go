package validate

import (
	"errors"
	"fmt"
	"go/types"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
)

// Ref names a type of another package: its import path and its name.
type Ref struct {
	// Path is the package's import path.
	Path string
	// Name is the type's name in the package.
	Name string
}

// String returns the reference as written in a schema.
func (r Ref) String() string { return r.Path + "." + r.Name }

// Resolved is what a Resolver knows about a type it found.
type Resolved struct {
	// PkgName is the name the package declares (the identifier the
	// generated code qualifies the type with).
	PkgName string
	// Comparable reports whether values of the type can be map keys.
	Comparable bool
}

// Resolver finds the types of other packages that field types name.
type Resolver interface {
	// Resolve returns, for each ref, what it found, or an error saying why
	// the package or the type cannot be used. Both slices have len(refs)
	// entries.
	Resolve(refs []Ref) ([]Resolved, []error)
}

// PackagesResolver resolves references with golang.org/x/tools/go/packages,
// as the go command would from Dir (the schema's directory): the packages
// must be importable from the module that holds Dir. It caches what it
// loaded and is safe for concurrent use.
type PackagesResolver struct {
	// Dir is the directory the go command runs in.
	Dir string

	mu    sync.Mutex
	cache map[string]*packages.Package
}

// Resolve implements Resolver. It loads every package not loaded yet in
// one go command run.
func (r *PackagesResolver) Resolve(refs []Ref) ([]Resolved, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = make(map[string]*packages.Package)
	}
	var missing []string
	for _, ref := range refs {
		if _, ok := r.cache[ref.Path]; !ok && !slices.Contains(missing, ref.Path) {
			missing = append(missing, ref.Path)
		}
	}
	var loadErr error
	if len(missing) > 0 {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: r.Dir}
		pkgs, err := packages.Load(cfg, missing...)
		if err != nil {
			loadErr = fmt.Errorf("load packages: %w", err)
		}
		for _, p := range pkgs {
			r.cache[p.PkgPath] = p
		}
	}
	res := make([]Resolved, len(refs))
	errs := make([]error, len(refs))
	for i, ref := range refs {
		res[i], errs[i] = lookup(r.cache[ref.Path], ref, loadErr)
	}
	return res, errs
}

func lookup(p *packages.Package, ref Ref, loadErr error) (Resolved, error) {
	if p == nil {
		if loadErr != nil {
			return Resolved{}, loadErr
		}
		return Resolved{}, fmt.Errorf("package %s not found", ref.Path)
	}
	if len(p.Errors) > 0 || p.Types == nil {
		msg := "cannot be loaded"
		if len(p.Errors) > 0 {
			msg = p.Errors[0].Msg
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			msg = strings.TrimSuffix(msg, "; to add it:")
		}
		return Resolved{}, fmt.Errorf("package %s: %s", ref.Path, msg)
	}
	if p.Types.Name() == "main" {
		return Resolved{}, fmt.Errorf("package %s is a command (package main) and cannot be imported", ref.Path)
	}
	obj := p.Types.Scope().Lookup(ref.Name)
	tn, ok := obj.(*types.TypeName)
	if !ok || !tn.Exported() {
		return Resolved{}, fmt.Errorf("package %s has no exported type %s", ref.Path, ref.Name)
	}
	if _, generic := tn.Type().(*types.Named); generic && tn.Type().(*types.Named).TypeParams().Len() > 0 {
		return Resolved{}, errors.New(ref.String() + " is generic; field types must not need type arguments")
	}
	return Resolved{PkgName: p.Types.Name(), Comparable: types.Comparable(tn.Type())}, nil
}
