// Package scaffold renders the starter files of ordergen init: a schema
// with one entity, whose first line names the JSON Schema for editors, and
// a generate.go with the go:generate line that compiles it. The text comes
// from the templates of package templates.
package scaffold

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"strings"
	"unicode"

	"github.com/ordergen/ordergen/generator/jsonschema"
	"github.com/ordergen/ordergen/generator/write"
	"github.com/ordergen/ordergen/templates"
)

// Files returns the starter files: schema.yaml, whose generated code is
// package pkg, and generate.go, in Go package goPkg (the package of the
// folder they go into). Both must be valid package names.
func Files(pkg, goPkg string) ([]write.File, error) {
	for _, name := range []string{pkg, goPkg} {
		if !ValidPackage(name) {
			return nil, fmt.Errorf("%q is not a valid package name: use a lower-case identifier that is not a keyword", name)
		}
	}
	data := struct{ Comment, Package, GoPackage string }{jsonschema.Comment, pkg, goPkg}
	names := []string{"schema.yaml", "generate.go"}
	out := make([]write.File, 0, len(names))
	for _, name := range names {
		t, err := templates.Parse(nil, name+".tmpl")
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		b := buf.Bytes()
		if strings.HasSuffix(name, ".go") {
			if b, err = format.Source(b); err != nil {
				return nil, fmt.Errorf("format %s: %w", name, err)
			}
		}
		out = append(out, write.File{Name: name, Contents: b})
	}
	return out, nil
}

// ValidPackage reports whether name can be a Go package name: a lower-case
// identifier that is not a keyword or the blank identifier.
func ValidPackage(name string) bool {
	return token.IsIdentifier(name) && !token.IsKeyword(name) && name != "_" && name == strings.ToLower(name)
}

// PackageName derives a package name from a folder name: lower-cased, with
// what cannot be in an identifier dropped ("order-events" gives
// "orderevents"); "events" when nothing usable is left.
func PackageName(folder string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(folder) {
		if r == '_' || unicode.IsLetter(r) || (unicode.IsDigit(r) && b.Len() > 0) {
			b.WriteRune(r)
		}
	}
	if name := b.String(); ValidPackage(name) {
		return name
	}
	return "events"
}
