package validate

import (
	"errors"
	"fmt"
	"go/token"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ordergen/ordergen/generator/diag"

	"github.com/ordergen/ordergen/generator/ir"
)

// builtins are Go's predeclared types that a field may have: every
// predeclared type but the interfaces (any, comparable, error).
var builtins = map[string]bool{
	"bool": true, "string": true, "byte": true, "rune": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true,
}

// integers are the types a version field may have; key fields may have
// these and string.
var integers = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"byte": true, "rune": true,
}

// wellKnown are qualified types resolved without loading packages.
var wellKnown = map[Ref]Resolved{
	{Path: "time", Name: "Time"}:     {PkgName: "time", Comparable: true},
	{Path: "time", Name: "Duration"}: {PkgName: "time", Comparable: true},
}

// maxTypeDepth is how deeply a type may nest slices, pointers and maps: a
// deeper one is a mistake (a paste gone wrong, a generated schema), not a
// type anyone handles, and parseType recurses once per level.
const maxTypeDepth = 16

// errTooDeep is parseType's error for a type that nests more than
// maxTypeDepth levels. It is not "unknown": the messages say so apart,
// without a guess at the type meant.
var errTooDeep = fmt.Errorf("is nested too deeply: a type nests at most %d levels ([], * and map[K] are one level each)", maxTypeDepth)

// parseType parses a field type expression: a builtin, []T, *T,
// map[K]V, or import/path.Name. Named types come back unresolved (no
// PkgName).
func parseType(s string) (*ir.Type, error) {
	return parseTypeDepth(s, 0)
}

func parseTypeDepth(s string, depth int) (*ir.Type, error) {
	if depth > maxTypeDepth {
		return nil, errTooDeep
	}
	switch {
	case s == "":
		return nil, fmt.Errorf("empty type")
	case strings.HasPrefix(s, "[]"):
		elem, err := parseTypeDepth(s[2:], depth+1)
		if err != nil {
			return nil, err
		}
		return &ir.Type{Kind: ir.Slice, Elem: elem}, nil
	case strings.HasPrefix(s, "*"):
		elem, err := parseTypeDepth(s[1:], depth+1)
		if err != nil {
			return nil, err
		}
		return &ir.Type{Kind: ir.Pointer, Elem: elem}, nil
	case strings.HasPrefix(s, "map["):
		end := closing(s, 3)
		if end < 0 {
			return nil, fmt.Errorf("unbalanced brackets")
		}
		key, err := parseTypeDepth(s[4:end], depth+1)
		if err != nil {
			return nil, err
		}
		elem, err := parseTypeDepth(s[end+1:], depth+1)
		if err != nil {
			return nil, err
		}
		return &ir.Type{Kind: ir.Map, Key: key, Elem: elem}, nil
	case builtins[s]:
		return &ir.Type{Kind: ir.Builtin, Name: s}, nil
	}
	switch s {
	case "any", "error", "comparable":
		return nil, fmt.Errorf("%s is an interface; fields need concrete types", s)
	}
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 {
		if token.IsIdentifier(s) {
			return nil, fmt.Errorf("not a Go builtin type; name a type of another package as import/path.Type")
		}
		return nil, fmt.Errorf("not a type expression")
	}
	path, name := s[:dot], s[dot+1:]
	if !token.IsIdentifier(name) || !token.IsExported(name) {
		return nil, fmt.Errorf("%q is not an exported type name", name)
	}
	if !validImportPath(path) {
		return nil, fmt.Errorf("%q is not a valid import path", path)
	}
	return &ir.Type{Kind: ir.Named, Path: path, Name: name}, nil
}

// typeProblem words err, parseType's error for src, the type of a field,
// key or version (what). candidates are the names a misspelling is
// compared with.
func typeProblem(what, src string, err error, candidates []string) string {
	if errors.Is(err, errTooDeep) {
		return fmt.Sprintf("%s type %s %v", what, clipType(src), err)
	}
	return fmt.Sprintf("unknown %s type %s: %v%s", what, clipType(src), err, suggestType(src, candidates))
}

// maxEcho is how much of a type a message quotes: a type pasted by
// mistake can be any length, and a message repeats it for every use.
const maxEcho = 80

// clipType quotes src, or its start and its length when it is longer than
// maxEcho bytes, so that the message stays on one readable line.
func clipType(s string) string {
	if len(s) <= maxEcho {
		return fmt.Sprintf("%q", s)
	}
	cut := maxEcho - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q (%d bytes)", s[:cut]+"...", len(s))
}

// closing returns the index of the ']' that closes the '[' at open.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// validImportPath accepts the paths the go command accepts, roughly:
// slash-separated elements of letters, digits and -._~, none empty, none
// starting with a dot.
func validImportPath(p string) bool {
	if p == "" {
		return false
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == "" || elem[0] == '.' {
			return false
		}
		for _, r := range elem {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+", r)
			if !ok {
				return false
			}
		}
	}
	return true
}

// namedRefs appends the named types inside t to refs.
func namedRefs(t *ir.Type, refs []*ir.Type) []*ir.Type {
	switch t.Kind {
	case ir.Named:
		return append(refs, t)
	case ir.Map:
		refs = namedRefs(t.Key, refs)
	}
	if t.Elem != nil {
		refs = namedRefs(t.Elem, refs)
	}
	return refs
}

// comparable reports whether t can be a map key, given resolved named
// types.
func comparable(t *ir.Type, named map[Ref]Resolved) bool {
	switch t.Kind {
	case ir.Builtin, ir.Pointer:
		return true
	case ir.Named:
		return named[Ref{Path: t.Path, Name: t.Name}].Comparable
	}
	return false
}

// typeNames are the type names a misspelt type is compared with: the
// builtins and the well-known qualified types.
func typeNames() []string {
	names := []string{"string", "int64", "int", "bool", "float64", "time.Time", "time.Duration", "[]byte"}
	for b := range builtins {
		if !slices.Contains(names, b) {
			names = append(names, b)
		}
	}
	slices.Sort(names[8:]) // the common ones first, the rest in a fixed order
	return names
}

// suggestType returns " (did you mean T?)" for the type expression s when
// its innermost name is close to a known type name, else "".
func suggestType(s string, candidates []string) string {
	inner := s
	for {
		if rest, ok := strings.CutPrefix(inner, "[]"); ok {
			inner = rest
		} else if rest, ok := strings.CutPrefix(inner, "*"); ok {
			inner = rest
		} else {
			break
		}
	}
	if strings.HasPrefix(inner, "map[") {
		return ""
	}
	m := diag.Closest(inner, candidates)
	if alias, ok := typeAliases[strings.ToLower(inner)]; ok && slices.Contains(candidates, alias) {
		m = alias
	}
	if m == "" {
		return ""
	}
	return " (did you mean " + s[:len(s)-len(inner)] + m + "?)"
}

// typeAliases are the Go types that other languages' type names (a JSON
// Schema's, SQL's, Java's) usually mean: "integer" suggests int64.
var typeAliases = map[string]string{
	"integer": "int64", "long": "int64", "bigint": "int64", "short": "int16", "smallint": "int16",
	"double": "float64", "float": "float64", "number": "float64", "real": "float64",
	"boolean": "bool",
	"str":     "string", "text": "string", "varchar": "string",
	"bytes": "[]byte", "binary": "[]byte", "bytea": "[]byte", "blob": "[]byte",
	"timestamp": "time.Time", "datetime": "time.Time", "date": "time.Time", "time": "time.Time",
	"duration": "time.Duration",
}

// keyTypes are the types a key may have.
func keyTypes() []string {
	return []string{"string", "int64", "int", "int32", "int16", "int8", "uint64", "uint", "uint32", "uint16", "uint8", "byte", "rune"}
}
