package generator

import (
	"fmt"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/emit/testkit"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
)

// File is one generated file: a base name and its contents.
type File = emit.File

// Header is the first line of every generated file.
const Header = emit.Header

// Check loads and validates the schema text src and returns its resolved
// model, or every problem found. r resolves qualified field types (see
// validate.PackagesResolver).
func Check(src []byte, r validate.Resolver) (*ir.Package, diag.List) {
	f, diags := schema.Load(src)
	if f == nil {
		return nil, diags
	}
	pkg, more := validate.Check(f, r)
	diags.Append(more)
	if diags.Len() > 0 {
		return nil, diags
	}
	return pkg, diags
}

// Generate compiles the schema text src into Go files, sorted by name. It
// returns every problem found in the schema as diagnostics; an error only
// for a failure of the generator itself.
func Generate(src []byte, r validate.Resolver) ([]File, diag.List, error) {
	pkg, diags := Check(src, r)
	if pkg == nil {
		return nil, diags, nil
	}
	files, err := emit.Files(pkg)
	return files, diags, err
}

// Emit returns the generated files of pkg, a checked schema, sorted by
// name, with the test kit's files after them when opts.ImportPath is set.
func Emit(pkg *ir.Package, opts Options) ([]File, error) {
	files, err := emit.Files(pkg)
	if err != nil || opts.ImportPath == "" {
		return files, err
	}
	kit, err := testkit.Files(pkg, opts.ImportPath)
	if err != nil {
		return nil, fmt.Errorf("test kit: %w", err)
	}
	return append(files, kit...), nil
}
