package write

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// File is one file to write: a name and its contents.
type File struct {
	// Name is the file's base name, or sub/name for a file in a
	// sub-directory (one level deep, separated by a slash).
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
	// Name is the file's name, as in File.
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
		if sub, _, ok := strings.Cut(f.Name, "/"); ok {
			if _, err := subdir(root, sub); err != nil {
				return nil, err
			}
		}
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
	dirs, err := owned(root, files)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		extra, err := extras(root, d, produced, header)
		if err != nil {
			return nil, err
		}
		out = append(out, extra...)
	}
	sortChanges(out)
	return out, nil
}

// extras returns the generated .go files of the directory d ("." or a
// sub-directory) that are not produced.
func extras(root *os.Root, d string, produced map[string]bool, header string) ([]Change, error) {
	entries, err := fs.ReadDir(root.FS(), d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read output directory: %w", err)
	}
	var out []Change
	for _, e := range entries {
		name := path.Join(d, e.Name())
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
	return out, nil
}

// owned returns the directories whose generated files are examined for
// extras: the directory itself, the sub-directories files go into, and
// the existing sub-directories named like a test kit (ending in "test"),
// which an earlier run may have written under another package name.
func owned(root *os.Root, files []File) ([]string, error) {
	dirs := []string{"."}
	for _, f := range files {
		if sub, _, ok := strings.Cut(f.Name, "/"); ok && !slices.Contains(dirs, sub) {
			dirs = append(dirs, sub)
		}
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("read output directory: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsDir() && strings.HasSuffix(e.Name(), "test") && checkSegment(e.Name()) == nil && !slices.Contains(dirs, e.Name()) {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs, nil
}

// subdir reports whether the sub-directory sub exists; anything but a
// directory in its place (a symbolic link that could lead elsewhere, a
// file) is an error.
func subdir(root *os.Root, sub string) (bool, error) {
	fi, err := root.Lstat(sub)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", sub, err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("refusing to write into %s in %s: it exists and is not a directory", sub, root.Name())
	}
	return true, nil
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
	emptied := map[string]bool{}
	for _, c := range changes {
		sub, _, nested := strings.Cut(c.Name, "/")
		if c.Kind == Extra {
			if err := root.Remove(c.Name); err != nil {
				return nil, fmt.Errorf("remove stale %s: %w", c.Name, err)
			}
			if nested {
				emptied[sub] = true
			}
			continue
		}
		if nested {
			if err := makeSubdir(root, sub); err != nil {
				return nil, err
			}
		}
		if err := writeAtomic(root, c.Name, c.New); err != nil {
			return nil, err
		}
	}
	for sub := range emptied {
		if entries, err := fs.ReadDir(root.FS(), sub); err == nil && len(entries) == 0 {
			if err := root.Remove(sub); err != nil {
				return nil, fmt.Errorf("remove empty %s: %w", sub, err)
			}
		}
	}
	return changes, nil
}

// checkName refuses any name that is not a plain file name inside the
// directory or inside one of its sub-directories (sub/name).
func checkName(name string) error {
	segs := strings.Split(name, "/")
	if len(segs) > 2 {
		return fmt.Errorf("refusing to write %q: at most one sub-directory deep", name)
	}
	for _, seg := range segs {
		if err := checkSegment(seg); err != nil {
			return fmt.Errorf("refusing to write %q: not a plain file name inside the output directory", name)
		}
	}
	return nil
}

// checkSegment refuses a path segment that is not a plain, visible name.
func checkSegment(seg string) error {
	if seg == "" || seg != filepath.Base(seg) || !filepath.IsLocal(seg) || strings.ContainsAny(seg, `/\`) || seg[0] == '.' {
		return fmt.Errorf("%q is not a plain name", seg)
	}
	return nil
}

// makeSubdir creates the sub-directory sub unless it exists.
func makeSubdir(root *os.Root, sub string) error {
	exists, err := subdir(root, sub)
	if err != nil || exists {
		return err
	}
	if err := root.Mkdir(sub, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", sub, err)
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
	dir, base := path.Split(name)
	tmp := dir + "." + base + ".ordergen-" + strconv.Itoa(os.Getpid()) + ".tmp"
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
