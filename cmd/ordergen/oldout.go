package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/ordergen/ordergen/generator"
)

// oldOutput is a folder beside a schema that holds code ordergen generated
// into an older default output folder.
type oldOutput struct {
	dir string
	pkg string
}

// oldOutputs returns the folders beside the schema at path, other than
// out, that hold code ordergen generated into an older default output
// folder: gen/ (the default before the output folder took the package's
// name), or a folder named after the package of the code it holds (the
// default output of an earlier package name).
func oldOutputs(path, out string) []oldOutput {
	schemaDir := filepath.Dir(path)
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(schemaDir)
	if err != nil {
		return nil
	}
	var found []oldOutput
	for _, e := range entries {
		dir := filepath.Join(schemaDir, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if abs, err := filepath.Abs(dir); err != nil || abs == absOut {
			continue
		}
		pkg := generatedPackage(dir)
		if pkg != "" && (e.Name() == "gen" || e.Name() == pkg) {
			found = append(found, oldOutput{dir: dir, pkg: pkg})
		}
	}
	return found
}

// generatedPackage returns the package of the first Go file of dir that
// ordergen generated, or "".
func generatedPackage(dir string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if string(bytes.TrimRight(line, "\r")) != generator.Header {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), m, b, parser.PackageClauseOnly)
		if err == nil {
			return f.Name.Name
		}
	}
	return ""
}
