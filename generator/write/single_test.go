package write

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.md")
	data := []byte(header + "\nv1\n")
	if c, err := CompareFile(path, data); err != nil || c == nil || c.Kind != Missing {
		t.Fatalf("CompareFile before writing: %+v, %v", c, err)
	}
	if wrote, err := WriteFile(path, data, header); err != nil || !wrote {
		t.Fatalf("first write: %v, %v", wrote, err)
	}
	if wrote, err := WriteFile(path, data, header); err != nil || wrote {
		t.Fatalf("unchanged write: %v, %v", wrote, err)
	}
	if c, err := CompareFile(path, data); err != nil || c != nil {
		t.Fatalf("CompareFile when fresh: %+v, %v", c, err)
	}
	if c, err := CompareFile(path, []byte(header+"\nv2\n")); err != nil || c == nil || c.Kind != Changed {
		t.Fatalf("CompareFile when stale: %+v, %v", c, err)
	}
	hand := filepath.Join(dir, "hand.md")
	if err := os.WriteFile(hand, []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(hand, data, header); err == nil {
		t.Error("WriteFile replaced a file ordergen did not write")
	}
	if b, _ := os.ReadFile(hand); string(b) != "# notes\n" {
		t.Errorf("hand-written file changed: %q", b)
	}
	if _, err := WriteFile(filepath.Join(dir, ".."), data, header); err == nil {
		t.Error("WriteFile accepted ..")
	}
}
