package main

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ordergen/ordergen/generator/scaffold"
)

// runInit is ordergen init [-package NAME]: it writes the starter files
// into the current folder, refusing to overwrite any file.
func runInit(args []string, stdout, stderr io.Writer) int {
	fset := newFlags("init")
	pkg := fset.String("package", "", "the generated code's package `NAME` (default: from the folder's name)")
	if code, ok := parseFlags(fset, args, stdout, stderr); !ok {
		return code
	}
	if fset.NArg() != 0 {
		return usageError(stderr, "init", "unexpected arguments %q", fset.Args())
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	if *pkg == "" {
		*pkg = scaffold.PackageName(filepath.Base(dir))
	}
	goPkg, err := folderPackage(dir)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	if goPkg == "" {
		goPkg = scaffold.PackageName(filepath.Base(dir))
	}
	files, err := scaffold.Files(*pkg, goPkg)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen init: %v\n", err)
		return exitUsage
	}
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(f.Name); err == nil {
			exist = append(exist, f.Name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "ordergen: %v\n", err)
			return exitBad
		}
	}
	if len(exist) > 0 {
		fmt.Fprintf(stderr, "ordergen init: refusing to overwrite %s in %s: nothing written\n", strings.Join(exist, " and "), dir)
		return exitBad
	}
	var written []string
	for _, f := range files {
		if err := createNew(f.Name, f.Contents); err != nil {
			for _, w := range written {
				_ = os.Remove(w)
			}
			fmt.Fprintf(stderr, "ordergen init: %v: nothing written\n", err)
			return exitBad
		}
		written = append(written, f.Name)
	}
	fmt.Fprintf(stdout, "wrote %s: edit the schema, then run go generate ./...\n", strings.Join(written, " and "))
	// generate.go runs go tool ordergen: say what it needs when go.mod
	// does not have it yet.
	switch declared, module := declaresTool(dir); {
	case !module:
		fmt.Fprintf(stderr, "ordergen: note: %s is in no Go module: run go mod init, then go get -tool %s (go generate runs go tool ordergen)\n", dir, toolPath)
	case !declared:
		fmt.Fprintf(stderr, "ordergen: note: go.mod declares no tool %s, which go generate runs as go tool ordergen: run go get -tool %s\n", toolPath, toolPath)
	}
	return exitOK
}

// createNew writes a file that must not exist yet.
func createNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	_, err = f.Write(data)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// folderPackage returns the package that the Go files of dir (tests
// aside) declare, or "" when there are none.
func folderPackage(dir string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", fmt.Errorf("list Go files: %w", err)
	}
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), m, nil, parser.PackageClauseOnly)
		if err != nil {
			continue // a broken file says nothing reliable
		}
		return f.Name.Name, nil
	}
	return "", nil
}
