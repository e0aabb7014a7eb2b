package validate

import (
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
)

func TestParseType(t *testing.T) {
	ok := map[string]string{
		"string":                     "string",
		"[]byte":                     "[]byte",
		"*int":                       "*int",
		"map[string][]int":           "map[string][]int",
		"map[int]map[string]bool":    "map[int]map[string]bool",
		"time.Time":                  ".Time",
		"gopkg.in/yaml.v3.Node":      ".Node",
		"[]example.com/x-y/z.Type":   "[].Type",
		"map[net/netip.Addr]float64": "map[.Addr]float64",
	}
	for in, want := range ok {
		got, err := parseType(in)
		if err != nil {
			t.Errorf("parseType(%q): %v", in, err)
			continue
		}
		if got.String() != want {
			t.Errorf("parseType(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "[]", "*", "map[", "map[string]", "Foo", "any", "chan int", "x.lower", "/x.T", "a//b.T", "[3]int", "func()", "int ", strings.Repeat("[]", 40) + "int"} {
		if got, err := parseType(in); err == nil {
			t.Errorf("parseType(%q) = %s, want an error", in, got)
		}
	}
}

func TestCheckWithoutResolver(t *testing.T) {
	src := "version: 1\npackage: p\nentities:\n  A:\n    key: {field: ID, type: string}\n    events:\n      E: {fields: {At: time.Time, Addr: net/netip.Addr}}\n"
	f, diags := schema.Load([]byte(src))
	if diags.Len() != 0 {
		t.Fatal(diags.Format("s"))
	}
	_, diags = Check(f, nil)
	if got := diags.Format("s"); got != "s:7:41: unresolvable type net/netip.Addr: no resolver for types of other packages\n" {
		t.Errorf("got %q", got)
	}
}

// TestTypeTooDeep: a type nested past the limit is not "unknown", gets no
// guess at the type meant (the innermost name is often a real type, and a
// guess of the same type with another name is nonsense), names the limit,
// and quotes at most 80 characters of the type however long it is.
func TestTypeTooDeep(t *testing.T) {
	if _, err := parseType(strings.Repeat("[]", maxTypeDepth) + "int"); err != nil {
		t.Errorf("%d levels: %v", maxTypeDepth, err)
	}
	for _, src := range []string{
		strings.Repeat("[]", 17) + "int",
		strings.Repeat("[]", 20) + "int",
		strings.Repeat("*", 5000) + "string",
		strings.Repeat("map[string]", 30) + "int8",
		strings.Repeat("[]", 17) + "integr",
	} {
		_, err := parseType(src)
		msg := typeProblem("field", src, err, typeNames())
		quoted, _, _ := strings.Cut(strings.TrimPrefix(msg, "field type "), " is nested")
		switch {
		case strings.Contains(msg, "unknown"), strings.Contains(msg, "did you mean"):
			t.Errorf("%.30s...: %s", src, msg)
		case !strings.Contains(msg, "is nested too deeply") || !strings.Contains(msg, "at most 16 levels"):
			t.Errorf("%.30s...: the message does not say it is too deep, with the limit: %s", src, msg)
		case len(strings.Trim(strings.Split(quoted, `" (`)[0], `"`)) > 80:
			t.Errorf("%.30s...: the message quotes more than 80 characters of the type: %s", src, msg)
		}
	}
}
