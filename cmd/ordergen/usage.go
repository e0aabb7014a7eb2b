package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand: how it is called, what it does, and the
// function that runs it.
type command struct {
	name string
	// synopsis are its usage lines, after "ordergen ".
	synopsis []string
	// summary says what it does, in a few words, for the global usage.
	summary string
	// help is the text of "ordergen NAME -h", after the usage lines.
	help string
	run  func(args []string, stdout, stderr io.Writer) int
}

// commands returns the subcommands, in the order the usage lists them.
func commands() []command {
	return []command{
		{name: "generate", synopsis: []string{"generate [-out DIR] SCHEMA"}, summary: "generate code into DIR",
			help: `Generate compiles SCHEMA into Go code in DIR: by default the out: folder
the schema names, else the folder named after its package beside it
(schema.yaml with package: rides gives ./rides, imported as
<module>/.../rides). It writes only the files whose contents changed,
atomically, never outside DIR, and removes the files it generated earlier
that are no longer produced. Inside a Go module it also writes the test
kit, package <package>test, into DIR/<package>test; outside one it says
that it did not. It warns when an older default output folder it wrote
(gen/) is left beside the schema.`,
			run: func(args []string, stdout, stderr io.Writer) int {
				return runGenerate("generate", args, stdout, stderr)
			}},
		{name: "check", synopsis: []string{"check [-out DIR] SCHEMA"}, summary: "exit 1 with a diff when DIR is stale",
			help: `Check writes nothing: it exits 1 and prints a unified diff naming the
changed, missing and extra files when DIR (as generate chooses it) is not
what generate would write, and 0 when it is. Put it in CI.`,
			run: func(args []string, stdout, stderr io.Writer) int { return runGenerate("check", args, stdout, stderr) }},
		{name: "docs", synopsis: []string{"docs [-out FILE [-check]] SCHEMA"}, summary: "write the Markdown catalogue (default: to standard output)",
			help: `Docs renders the schema's catalogue: entities, keys, versions, states,
events and fields, policies, and a Mermaid state diagram per entity with
states. With -check it writes nothing and exits 1 with a diff when FILE
is stale.`,
			run: runDocs},
		{name: "asyncapi", synopsis: []string{"asyncapi [-out FILE [-check]] SCHEMA"}, summary: "write the AsyncAPI 3.0 document (default: to standard output)",
			help: `Asyncapi writes the schema's AsyncAPI 3.0.0 document, in YAML: a message
per event with the JSON Schema of its payload and its doc:, a channel per
entity and broker its brokers: names (one without an address for an entity
that names none), send and receive operations, and the bindings that carry
the key (Kafka's record key, RabbitMQ's routing key, Pub/Sub's ordering key,
SQS's message group). With -check it writes nothing and exits 1 with a diff
when FILE is stale.`,
			run: runAsyncAPI},
		{name: "breaking", synopsis: []string{"breaking -against OLD NEW", "breaking -rules"}, summary: "exit 1 listing the changes from OLD that break consumers",
			help: `Breaking compares NEW with OLD, a file or, written git:REV, NEW as of a git
revision, and prints each change that breaks consumers as
NEW:line:col: RULE_ID: message; it exits 1 when there is one, and says
in one line that there is none. A comment
"# ordergen:breaking-ok RULE_ID reason" on the reported line of NEW accepts
that change: it is listed as accepted and does not fail. -rules lists the
rules.`,
			run: runBreaking},
		{name: "init", synopsis: []string{"init [-package NAME]"}, summary: "write a starter schema.yaml and generate.go here",
			help: `Init writes schema.yaml (one entity to edit) and generate.go, with the
go:generate line, into the current folder, and refuses to overwrite
either.`,
			run: runInit},
		{name: "jsonschema", synopsis: []string{"jsonschema"}, summary: "print the JSON Schema of schema files",
			help: `Jsonschema prints the JSON Schema that editors (through the YAML language
server) use to complete and check schema files.`,
			run: runJSONSchema},
		{name: "version", synopsis: []string{"version"}, summary: "print the version",
			help: `Version prints the version of the ordergen module it was built from.`,
			run:  runVersion},
	}
}

// globalUsage is the text of "ordergen help".
func globalUsage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	width := 0
	for _, c := range commands() {
		for _, s := range c.synopsis {
			width = max(width, len(s))
		}
	}
	for _, c := range commands() {
		for i, s := range c.synopsis {
			summary := ""
			if i == 0 {
				summary = c.summary
			}
			fmt.Fprintf(&b, "%s\n", strings.TrimRight(fmt.Sprintf("  ordergen %-*s  %s", width, s, summary), " "))
		}
	}
	b.WriteString("\nordergen COMMAND -h says more about a command.\n")
	return b.String()
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// newFlags returns the flag set of the subcommand name. It prints nothing
// itself: parseFlags does.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("ordergen "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses a subcommand's flags. With -h it prints the
// subcommand's help to stdout; with a bad flag, the error and the usage
// lines to stderr. When ok is false the subcommand returns code: 0 for -h,
// 2 otherwise.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	name := strings.TrimPrefix(fs.Name(), "ordergen ")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, name, fs)
		return exitOK, false
	case err != nil:
		return usageError(stderr, name, "%v", err), false
	}
	return 0, true
}

// printHelp prints the help of the subcommand name, with its flags.
func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := lookup(name)
	for _, s := range c.synopsis {
		fmt.Fprintf(w, "usage: ordergen %s\n", s)
	}
	fmt.Fprintf(w, "\n%s\n", c.help)
	if fs == nil {
		return
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// usageError reports a usage error of the subcommand name with its usage
// lines, and returns the exit status of a usage error.
func usageError(stderr io.Writer, name, format string, args ...any) int {
	fmt.Fprintf(stderr, "ordergen %s: %s\n", name, fmt.Sprintf(format, args...))
	if c, ok := lookup(name); ok {
		for _, s := range c.synopsis {
			fmt.Fprintf(stderr, "usage: ordergen %s\n", s)
		}
		fmt.Fprintf(stderr, "(ordergen %s -h says more)\n", name)
	}
	return exitUsage
}
