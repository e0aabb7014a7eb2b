package main

import (
	"fmt"
	"io"

	"github.com/ordergen/ordergen/generator/asyncapi"
)

// runAsyncAPI is ordergen asyncapi [-out FILE [-check]] SCHEMA. It is a
// subcommand of its own rather than a format of docs: docs writes the
// Markdown catalogue for people, this a machine-readable contract for
// other tools, and each keeps docs' shape (-out, -check, standard output).
func runAsyncAPI(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("asyncapi")
	out := fs.String("out", "", "write the document to `FILE` (default: standard output)")
	check := fs.Bool("check", false, "write nothing: exit 1 with a diff when FILE is stale")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, "asyncapi", "want exactly one SCHEMA argument, got %d", fs.NArg())
	}
	if *check && *out == "" {
		return usageError(stderr, "asyncapi", "-check needs -out FILE")
	}
	path := fs.Arg(0)
	pkg := loadSchema(path, stderr)
	if pkg == nil {
		return exitBad
	}
	text, err := asyncapi.Document(pkg)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %s: %v\n", path, err)
		return exitBad
	}
	return fileOutput{command: "asyncapi", out: *out, check: *check, header: asyncapi.Header}.emit(text, path, stdout, stderr)
}
