package generator

import (
	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/validate"
)

// Options change what GenerateWith produces.
type Options struct {
	// ImportPath is the import path of the output directory. When set, the
	// test kit (package <package>test) is generated too, into the
	// sub-directory <package>test: its files are named
	// "<package>test/name.go". The kit imports the generated package by
	// this path, so without it there is no kit.
	ImportPath string
}

// GenerateWith is Generate with options: the generated files, sorted by
// name, with the test kit's files after them when opts.ImportPath is set.
func GenerateWith(src []byte, r validate.Resolver, opts Options) ([]File, diag.List, error) {
	pkg, diags := Check(src, r)
	if pkg == nil {
		return nil, diags, nil
	}
	files, err := Emit(pkg, opts)
	return files, diags, err
}
