package main

import (
	"fmt"
	"io"

	"github.com/ordergen/ordergen/generator/jsonschema"
)

// runJSONSchema is ordergen jsonschema: it prints the JSON Schema of
// schema files.
func runJSONSchema(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "ordergen jsonschema: unexpected arguments %q\n%s", args, usage)
		return exitUsage
	}
	if _, err := stdout.Write(jsonschema.Schema()); err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	return exitOK
}
