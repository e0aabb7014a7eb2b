package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// importPath returns the import path of the directory dir: the module path
// of the go.mod in dir or in its nearest parent, joined with dir's path
// below that. It returns "" when no go.mod is found: then nothing can
// import dir, and the test kit is not generated.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("import path of %s: %w", dir, err)
	}
	root, data, err := findGoMod(abs)
	if err != nil || root == "" {
		return "", err
	}
	mod := modfile.ModulePath(data)
	if mod == "" {
		return "", fmt.Errorf("import path of %s: %s has no module path", dir, filepath.Join(root, "go.mod"))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return "", fmt.Errorf("import path of %s: %w", dir, err)
	}
	return path.Join(mod, filepath.ToSlash(rel)), nil
}

// findGoMod returns the folder of the go.mod in the absolute folder dir or
// in its nearest parent, with its contents; "" when there is none.
func findGoMod(dir string) (string, []byte, error) {
	for root := dir; ; {
		data, err := os.ReadFile(filepath.Join(root, "go.mod"))
		switch {
		case err == nil:
			return root, data, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", nil, fmt.Errorf("read %s: %w", filepath.Join(root, "go.mod"), err)
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", nil, nil
		}
		root = parent
	}
}

// toolPath is the package that go.mod declares as a tool for go tool
// ordergen, which the generate.go of ordergen init runs.
const toolPath = "github.com/ordergen/ordergen/cmd/ordergen"

// declaresTool reports whether the go.mod above the absolute folder dir
// declares ordergen as a tool, and whether there is a go.mod at all.
func declaresTool(dir string) (declared, module bool) {
	root, data, err := findGoMod(dir)
	if err != nil || root == "" {
		return false, false
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return false, true
	}
	for _, t := range f.Tool {
		if t.Path == toolPath {
			return true, true
		}
	}
	return false, true
}
