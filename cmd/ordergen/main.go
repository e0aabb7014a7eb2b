package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/ordergen/ordergen/generator/diag"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const (
	exitOK    = 0
	exitBad   = 1
	exitUsage = 2
)

// run is the whole command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, globalUsage())
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := lookup(args[1]); ok {
				return c.run([]string{"-h"}, stdout, stderr) // prints its help and flags
			}
		}
		fmt.Fprint(stdout, globalUsage())
		return exitOK
	}
	c, ok := lookup(args[0])
	if !ok {
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		fmt.Fprintf(stderr, "ordergen: unknown command %q%s\n%s", args[0], diag.Suggest(args[0], names), globalUsage())
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "version", "unexpected arguments %q", fs.Args())
	}
	fmt.Fprintf(stdout, "ordergen %s\n", version())
	return exitOK
}

func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
