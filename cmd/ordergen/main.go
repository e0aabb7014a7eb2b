package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/validate"
	"github.com/ordergen/ordergen/generator/write"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const (
	exitOK    = 0
	exitBad   = 1
	exitUsage = 2
)

const usage = `usage:
  ordergen generate [-out DIR] SCHEMA   generate code into DIR (default: gen/ beside SCHEMA)
  ordergen check    [-out DIR] SCHEMA   exit 1 with a diff when DIR is stale
  ordergen docs [-out FILE [-check]] SCHEMA
                                        write the Markdown catalogue (default: to standard output)
  ordergen breaking -against OLD NEW    exit 1 listing the changes from OLD that break consumers
                                        (OLD: a file, or git:REV for NEW as of a git revision)
  ordergen breaking -rules              list the rules of breaking
  ordergen init [-package NAME]         write a starter schema.yaml and generate.go here
  ordergen jsonschema                   print the JSON Schema of schema files
  ordergen version                      print the version
`

// run is the whole command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "generate", "check":
		return runGenerate(args[0], args[1:], stdout, stderr)
	case "docs":
		return runDocs(args[1:], stdout, stderr)
	case "breaking":
		return runBreaking(args[1:], stdout, stderr)
	case "init":
		return runInit(args[1:], stdout, stderr)
	case "jsonschema":
		return runJSONSchema(args[1:], stdout, stderr)
	case "version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "ordergen version: unexpected arguments %q\n%s", args[1:], usage)
			return exitUsage
		}
		fmt.Fprintf(stdout, "ordergen %s\n", version())
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "ordergen: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}

func runGenerate(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ordergen "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output `DIR` (default: gen/ beside SCHEMA)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "ordergen %s: want exactly one SCHEMA argument, got %d\n%s", cmd, fs.NArg(), usage)
		return exitUsage
	}
	path := fs.Arg(0)
	dir := *out
	if dir == "" {
		dir = filepath.Join(filepath.Dir(path), "gen")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	resolver := &validate.PackagesResolver{Dir: filepath.Dir(path)}
	kitPath, err := importPath(dir)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	files, diags, err := generator.GenerateWith(src, resolver, generator.Options{ImportPath: kitPath})
	if diags.Len() > 0 {
		fmt.Fprint(stderr, diags.Format(path))
		return exitBad
	}
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %s: %v\n", path, err)
		return exitBad
	}
	wf := make([]write.File, len(files))
	for i, f := range files {
		wf[i] = write.File{Name: f.Name, Contents: f.Contents}
	}
	if cmd == "check" {
		return check(dir, wf, stdout, stderr)
	}
	if _, err := write.Apply(dir, wf, generator.Header); err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	return exitOK
}

func check(dir string, files []write.File, stdout, stderr io.Writer) int {
	changes, err := write.Compare(dir, files, generator.Header)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	if len(changes) == 0 {
		return exitOK
	}
	var names []string
	for _, c := range changes {
		names = append(names, c.Kind.String()+" "+filepath.Join(dir, c.Name))
	}
	fmt.Fprintf(stderr, "ordergen: %s is stale (run ordergen generate):\n  %s\n", dir, strings.Join(names, "\n  "))
	fmt.Fprint(stdout, write.Unified(changes))
	return exitBad
}

// parseFlags parses a subcommand's flags, printing the usage on -h or a bad
// flag. When ok is false the subcommand returns code: 0 for -h, 2 otherwise.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}
