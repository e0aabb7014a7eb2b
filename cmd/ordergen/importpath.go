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
	for root := abs; ; {
		data, err := os.ReadFile(filepath.Join(root, "go.mod"))
		switch {
		case err == nil:
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("import path of %s: %s has no module path", dir, filepath.Join(root, "go.mod"))
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", fmt.Errorf("import path of %s: %w", dir, err)
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("import path of %s: %w", dir, err)
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", nil
		}
		root = parent
	}
}
