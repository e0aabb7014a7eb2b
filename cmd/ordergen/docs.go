package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/ordergen/ordergen/generator/docs"
)

// runDocs is ordergen docs [-out FILE] [-check] SCHEMA.
func runDocs(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("docs")
	out := fs.String("out", "", "write the catalogue to `FILE` (default: standard output)")
	check := fs.Bool("check", false, "write nothing: exit 1 with a diff when FILE is stale")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, "docs", "want exactly one SCHEMA argument, got %d", fs.NArg())
	}
	if *check && *out == "" {
		return usageError(stderr, "docs", "-check needs -out FILE")
	}
	path := fs.Arg(0)
	pkg := loadSchema(path, stderr)
	if pkg == nil {
		return exitBad
	}
	// The catalogue links the schema relative to where it is written.
	source := filepath.Base(path)
	if *out != "" {
		if rel, err := filepath.Rel(filepath.Dir(*out), path); err == nil {
			source = filepath.ToSlash(rel)
		}
	}
	text, err := docs.Catalogue(pkg, source)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %s: %v\n", path, err)
		return exitBad
	}
	return fileOutput{command: "docs", out: *out, check: *check, header: docs.Header}.emit(text, path, stdout, stderr)
}
