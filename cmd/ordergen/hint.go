package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// regenerateHint says how the user regenerates the code of the schema at
// path: go generate in the schema's folder when a Go file there has a
// go:generate line that runs ordergen generate on it (as ordergen init
// writes it), else the ordergen generate command itself, with out when
// given.
func regenerateHint(path, out string) string {
	dir := filepath.Dir(path)
	if hasGenerateLine(dir, filepath.Base(path)) {
		switch {
		case dir == ".":
			return "go generate ./..."
		case filepath.IsLocal(dir):
			return "go generate ./" + filepath.ToSlash(dir)
		}
		return "go generate in " + dir
	}
	if out != "" {
		return "ordergen generate -out " + out + " " + path
	}
	return "ordergen generate " + path
}

// hasGenerateLine reports whether a Go file of dir (tests aside) has a
// go:generate line that runs ordergen generate on the schema file named
// schema.
func hasGenerateLine(dir, schema string) bool {
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return false
	}
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			directive, ok := strings.CutPrefix(sc.Text(), "//go:generate ")
			if !ok {
				continue
			}
			words := strings.Fields(directive)
			for i, w := range words {
				if strings.HasSuffix(w, "ordergen") && i+1 < len(words) && words[i+1] == "generate" && words[len(words)-1] == schema {
					return true
				}
			}
		}
	}
	return false
}
