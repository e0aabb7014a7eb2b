package main

import (
	"fmt"
	"io"

	"github.com/ordergen/ordergen/generator/jsonschema"
)

// runJSONSchema is ordergen jsonschema: it prints the JSON Schema of
// schema files.
func runJSONSchema(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("jsonschema")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "jsonschema", "unexpected arguments %q", fs.Args())
	}
	if _, err := stdout.Write(jsonschema.Schema()); err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	return exitOK
}
