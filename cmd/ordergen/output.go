package main

import (
	"fmt"
	"io"

	"github.com/ordergen/ordergen/generator/write"
)

// fileOutput is where a subcommand that renders one file from a schema
// (docs, asyncapi) puts it: -out FILE, else standard output; with -check,
// nowhere: it compares FILE instead.
type fileOutput struct {
	// command names the subcommand, for the hint of a stale FILE.
	command string
	out     string
	check   bool
	// header is the first line of what the subcommand writes, without
	// which it refuses to replace FILE.
	header string
}

// emit writes text as o says for the schema at path and returns the exit
// status: with -check, 1 and a diff on stdout when FILE is stale.
func (o fileOutput) emit(text []byte, path string, stdout, stderr io.Writer) int {
	switch {
	case o.out == "":
		if _, err := stdout.Write(text); err != nil {
			fmt.Fprintf(stderr, "ordergen: %v\n", err)
			return exitBad
		}
	case o.check:
		c, err := write.CompareFile(o.out, text)
		if err != nil {
			fmt.Fprintf(stderr, "ordergen: %v\n", err)
			return exitBad
		}
		if c != nil {
			fmt.Fprintf(stderr, "ordergen: %s is stale (%s; run ordergen %s -out %s %s)\n", o.out, c.Kind, o.command, o.out, path)
			fmt.Fprint(stdout, write.Unified([]write.Change{*c}))
			return exitBad
		}
	default:
		if _, err := write.WriteFile(o.out, text, o.header); err != nil {
			fmt.Fprintf(stderr, "ordergen: %v\n", err)
			return exitBad
		}
	}
	return exitOK
}
