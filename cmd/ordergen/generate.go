package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ordergen/ordergen/generator"
	"github.com/ordergen/ordergen/generator/emit/testkit"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/write"
)

// runGenerate is ordergen generate and ordergen check.
func runGenerate(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(cmd)
	out := fs.String("out", "", "output `DIR` (default: the schema's out:, else the folder named after its package, beside SCHEMA)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, cmd, "want exactly one SCHEMA argument, got %d", fs.NArg())
	}
	path := fs.Arg(0)
	pkg := loadSchema(path, stderr)
	if pkg == nil {
		return exitBad
	}
	dir := *out
	if dir == "" {
		dir = defaultOut(path, pkg)
	}
	kitPath, err := importPath(dir)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	files, err := generator.Emit(pkg, kitPath)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %s: %v\n", path, err)
		return exitBad
	}
	if cmd == "check" {
		return check(dir, files, regenerateHint(path, *out), stdout, stderr)
	}
	if _, err := write.Apply(dir, files, generator.Header); err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	if kitPath == "" {
		fmt.Fprintf(stderr, "ordergen: note: %s is in no Go module (no go.mod in it or above), so the test kit %s was not generated: run go mod init, then generate again\n", dir, testkit.Dir(pkg))
	}
	for _, old := range oldOutputs(path, dir) {
		fmt.Fprintf(stderr, "ordergen: warning: %s holds code ordergen generated earlier (package %s), in an older default output folder; the code is now in %s: remove %s and import the new folder (or set out: in the schema, or -out, to keep generating into %s)\n",
			old.dir, old.pkg, dir, old.dir, old.dir)
	}
	return exitOK
}

// defaultOut is the output folder of the schema at path when -out is not
// given: the schema's out:, else the folder named after its package,
// beside the schema, so that the import path ends in the package's name.
func defaultOut(path string, pkg *ir.Package) string {
	name := pkg.Name
	if pkg.Out != "" {
		name = filepath.FromSlash(pkg.Out)
	}
	return filepath.Join(filepath.Dir(path), name)
}

// check compares dir with files. Its diff names the files by their paths
// as the user knows them (dir joined with the file's name), and its message
// says how to regenerate: hint.
func check(dir string, files []write.File, hint string, stdout, stderr io.Writer) int {
	changes, err := write.Compare(dir, files, generator.Header)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	if len(changes) == 0 {
		return exitOK
	}
	var names []string
	for i, c := range changes {
		names = append(names, c.Kind.String()+" "+filepath.Join(dir, c.Name))
		changes[i].Name = filepath.ToSlash(filepath.Join(dir, c.Name))
	}
	fmt.Fprintf(stderr, "ordergen: %s is stale (run %s):\n  %s\n", dir, hint, strings.Join(names, "\n  "))
	fmt.Fprint(stdout, write.Unified(changes))
	return exitBad
}
