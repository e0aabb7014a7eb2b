package emit

import (
	"bytes"
	"fmt"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"

	"github.com/ordergen/ordergen/generator/ir"
)

// NewFile returns a jennifer file of package name that starts with the
// generated header, for the emitters of other packages (the test kit).
func NewFile(name string) *jen.File {
	f := jen.NewFile(name)
	f.HeaderComment(Header[len("// "):])
	f.ImportName(RuntimePath, "runtime")
	f.ImportName(TransportPath, "transport")
	f.ImportName(MeterPath, "meter")
	f.ImportName(DurablePath, "durable")
	f.ImportName(GenImplPath, "genimpl")
	return f
}

// Render renders f as the file name: gofmt-formatted, imports grouped as
// goimports groups them (standard library first).
func Render(name string, f *jen.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	src, err := imports.Process(name, buf.Bytes(), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	return src, nil
}

// Type returns the Go code of the field type t.
func Type(t *ir.Type) jen.Code { return typ(t) }

// ImportNames registers with f the package names of the types that the
// event fields of pkg use.
func ImportNames(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		for _, ev := range e.Events {
			for _, fl := range ev.Fields {
				importNames(f, fl.Type)
			}
		}
	}
}
