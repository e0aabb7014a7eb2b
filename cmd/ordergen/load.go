package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/validate"
)

// loadSchema reads and checks the schema at path. It reports problems to
// stderr (as path:line:col: message) and returns nil then.
func loadSchema(path string, stderr io.Writer) *ir.Package {
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return nil
	}
	pkg, diags := generator.Check(src, &validate.PackagesResolver{Dir: filepath.Dir(path)})
	if diags.Len() > 0 {
		fmt.Fprint(stderr, diags.Format(path))
		return nil
	}
	return pkg
}
