package write

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// File is one file to write: a base name and its contents.
type File struct {
	// Name is the file's base name.
	Name string
	// Contents are the file's bytes.
	Contents []byte
}

// Kind tells how a file in the directory differs from the generated one.
type Kind uint8

const (
	// Changed: the file exists with other contents.
	Changed Kind = iota + 1
	// Missing: the file is generated but not in the directory.
	Missing
	// Extra: the directory holds a file generated earlier that is no
	// longer produced.
	Extra
)

// String returns "changed", "missing" or "extra".
func (k Kind) String() string {
	switch k {
	case Changed:
		return "changed"
	case Missing:
		return "missing"
	case Extra:
		return "extra"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Change is one difference between the generated files and the directory.
type Change struct {
	// Name is the file's base name.
	Name string
	// Kind says how it differs.
	Kind Kind
	// Old is the directory's contents (nil when Missing).
	Old []byte
	// New is the generated contents (nil when Extra).
	New []byte
}

// Compare returns how dir differs from files, sorted by name. A directory
// that does not exist differs by every file. header is the first line that
// marks a file as generated.
func Compare(dir string, files []File, header string) ([]Change, error) {
	for _, f := range files {
		if err := checkName(f.Name); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		var out []Change
		for _, f := range files {
			out = append(out, Change{Name: f.Name, Kind: Missing, New: f.Contents})
		}
		sortChanges(out)
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open output directory: %w", err)
	}
	defer root.Close()
	return compare(root, files, header)
}

func compare(root *os.Root, files []File, header string) ([]Change, error) {
	var out []Change
	produced := make(map[string]bool, len(files))
	for _, f := range files {
		produced[f.Name] = true
		old, exists, err := readRegular(root, f.Name)
		switch {
		case err != nil:
			return nil, err
		case !exists:
			out = append(out, Change{Name: f.Name, Kind: Missing, New: f.Contents})
		case !bytes.Equal(old, f.Contents):
			out = append(out, Change{Name: f.Name, Kind: Changed, Old: old, New: f.Contents})
		}
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("read output directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if produced[name] || !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") {
			continue
		}
		old, err := root.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if isGenerated(old, header) {
			out = append(out, Change{Name: name, Kind: Extra, Old: old})
		}
	}
	sortChanges(out)
	return out, nil
}

// Apply makes dir hold files: it creates dir if needed, writes the files
// that changed or are missing, and removes the extra ones. It returns what
// it changed.
func Apply(dir string, files []File, header string) ([]Change, error) {
	for _, f := range files {
		if err := checkName(f.Name); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open output directory: %w", err)
	}
	defer root.Close()
	changes, err := compare(root, files, header)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if c.Kind == Extra {
			if err := root.Remove(c.Name); err != nil {
				return nil, fmt.Errorf("remove stale %s: %w", c.Name, err)
			}
			continue
		}
		if err := writeAtomic(root, c.Name, c.New); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// checkName refuses any name that is not a plain file name inside the
// directory.
func checkName(name string) error {
	if name == "" || name != filepath.Base(name) || !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) || name[0] == '.' {
		return fmt.Errorf("refusing to write %q: not a plain file name inside the output directory", name)
	}
	return nil
}

// readRegular reads name if it exists; anything but a regular file (a
// symbolic link that could lead outside, a directory) is an error.
func readRegular(root *os.Root, name string) ([]byte, bool, error) {
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("stat %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("refusing to write %s in %s: it exists and is not a regular file", name, root.Name())
	}
	b, err := root.ReadFile(name)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", name, err)
	}
	return b, true, nil
}

// writeAtomic writes data to a temporary file beside name, then renames it
// over name, so that readers see the old or the new contents, never a mix.
func writeAtomic(root *os.Root, name string, data []byte) error {
	tmp := "." + name + ".ordergen-" + strconv.Itoa(os.Getpid()) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if syncErr := f.Sync(); err == nil {
		err = syncErr
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func isGenerated(contents []byte, header string) bool {
	line, _, _ := bytes.Cut(contents, []byte("\n"))
	return string(bytes.TrimRight(line, "\r")) == header
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.Name, b.Name) })
}
