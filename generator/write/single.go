package write

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile makes the file at path hold data, atomically, unless it holds
// it already; it reports whether it wrote. It creates the folders of path
// that do not exist, as Apply creates its output folder. It refuses to
// replace a file whose first line is not header (a file ordergen did not
// write) and anything but a regular file.
func WriteFile(path string, data []byte, header string) (bool, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := checkSegment(name); err != nil {
		return false, fmt.Errorf("refusing to write %q: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create the folder of %s: %w", path, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, fmt.Errorf("open the directory of %s: %w", path, err)
	}
	defer root.Close()
	old, exists, err := readRegular(root, name)
	switch {
	case err != nil:
		return false, err
	case exists && bytes.Equal(old, data):
		return false, nil
	case exists && !isGenerated(old, header):
		return false, fmt.Errorf("refusing to replace %s: its first line is not %q, so ordergen did not write it", path, header)
	}
	if err := writeAtomic(root, name, data); err != nil {
		return false, err
	}
	return true, nil
}

// CompareFile returns how the file at path differs from data: nil when it
// holds data, a Changed or a Missing change otherwise. The change is named
// after path.
func CompareFile(path string, data []byte) (*Change, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Change{Name: path, Kind: Missing, New: data}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if bytes.Equal(old, data) {
		return nil, nil
	}
	return &Change{Name: path, Kind: Changed, Old: old, New: data}, nil
}
