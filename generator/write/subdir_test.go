package write

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSubdirectoryNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a/b/c.go", "sub/../x.go", "../sub/x.go", ".hidden/x.go", "sub/.x.go", "sub/", "/sub/x.go", `sub\x.go`} {
		if _, err := Apply(filepath.Join(dir, "gen"), []File{{Name: name, Contents: []byte("x")}}, header); err == nil {
			t.Errorf("Apply accepted %q", name)
		}
	}
	if _, err := Apply(filepath.Join(dir, "gen"), []File{{Name: "kittest/x.go", Contents: []byte(header + "\n")}}, header); err != nil {
		t.Errorf("Apply refused a file in a sub-directory: %v", err)
	}
}

func TestApplyCleansSubdirectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	gen := func(s string) []byte { return []byte(header + "\n" + s + "\n") }
	files := []File{{"a.go", gen("a")}, {"ledgertest/kit.go", gen("kit")}, {"ledgertest/old.go", gen("old")}}
	if _, err := Apply(dir, files, header); err != nil {
		t.Fatal(err)
	}
	mustWrite := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("ledgertest/hand.go", []byte("package ledgertest\n"))
	mustWrite("banktest/kit.go", gen("an earlier package name"))
	mustWrite("other/x.go", gen("not a test kit"))
	if changes, err := Compare(dir, files, header); err != nil || len(changes) != 1 || changes[0].Name != "banktest/kit.go" || changes[0].Kind != Extra {
		t.Fatalf("Compare: %+v, %v", changes, err)
	}
	changes, err := Apply(dir, files[:2], header)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Name != "banktest/kit.go" || changes[1].Name != "ledgertest/old.go" {
		t.Fatalf("Apply: %+v", changes)
	}
	for name, want := range map[string]bool{
		"a.go": true, "ledgertest/kit.go": true, "ledgertest/hand.go": true, "other/x.go": true,
		"ledgertest/old.go": false, "banktest/kit.go": false, "banktest": false,
	} {
		_, err := os.Lstat(filepath.Join(dir, name))
		if exists := err == nil; exists != want {
			t.Errorf("%s exists: %v, want %v", name, exists, want)
		}
	}
}

func TestSubdirectorySymlinkRefused(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "gen")
	for _, d := range []string{outside, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "ledgertest")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	files := []File{{"ledgertest/kit.go", []byte(header + "\n")}}
	if _, err := Apply(dir, files, header); err == nil {
		t.Error("Apply wrote through a symbolic link")
	}
	if _, err := Compare(dir, files, header); err == nil {
		t.Error("Compare read through a symbolic link")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files appeared outside: %v", entries)
	}
}
