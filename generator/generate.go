package generator

import (
	"fmt"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/emit"
	"github.com/ordergen/ordergen/generator/emit/testkit"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
	"github.com/ordergen/ordergen/generator/write"
)

// Header is the first line of every generated file.
const Header = emit.Header

// Options change what Generate produces.
type Options struct {
	// Resolver resolves the qualified field types of the schema (see
	// validate.PackagesResolver). Nil: any qualified type but time.Time and
	// time.Duration is an error.
	Resolver validate.Resolver
	// ImportPath is the import path of the output directory. When set, the
	// test kit (package <package>test) is generated too, into the
	// sub-directory <package>test: its files are named
	// "<package>test/name.go". The kit imports the generated package by
	// this path, so without it there is no kit.
	ImportPath string
}

// Generate compiles the schema text src into Go files: the generated
// package's, sorted by name, then the test kit's when opts.ImportPath is
// set. It returns every problem found in the schema as diagnostics; an
// error only for a failure of the generator itself. It is Check, then
// Emit.
func Generate(src []byte, opts Options) ([]write.File, diag.List, error) {
	pkg, diags := Check(src, opts.Resolver)
	if pkg == nil {
		return nil, diags, nil
	}
	files, err := Emit(pkg, opts.ImportPath)
	return files, diags, err
}

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

// Emit returns the generated files of pkg, a checked schema, sorted by
// name, with the test kit's files after them when importPath, the import
// path of the output directory, is set. The command uses Check and Emit
// apart, since the schema names its output directory.
func Emit(pkg *ir.Package, importPath string) ([]write.File, error) {
	files, err := emit.Files(pkg)
	if err != nil || importPath == "" {
		return files, err
	}
	kit, err := testkit.Files(pkg, importPath)
	if err != nil {
		return nil, fmt.Errorf("test kit: %w", err)
	}
	return append(files, kit...), nil
}
