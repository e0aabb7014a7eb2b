package schema

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/diag"
)

// Load parses src, the text of a schema, into a File. It returns every
// problem it found in diags; the File is nil only when the document could
// not be parsed as YAML at all. A File returned with diagnostics holds what
// could be understood, so that validation can report more problems.
func Load(src []byte) (*File, diag.List) {
	l := loader{src: src}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.diags.Add(diag.Pos{Line: 1, Col: 1}, "empty schema: expected a mapping with version, package and entities")
		} else {
			l.syntaxError(err)
		}
		return nil, l.diags
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		l.diags.Add(pos(&extra), "a schema is a single YAML document; found another one")
	case !errors.Is(err, io.EOF):
		l.syntaxError(err)
	}
	l.checkAnchors(&doc)
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			l.diags.Add(pos(root), "empty schema: expected a mapping with version, package and entities")
			return nil, l.diags
		}
		root = root.Content[0]
	}
	f := l.file(root)
	return f, l.diags
}

type loader struct {
	src   []byte
	diags diag.List
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems start the messages of yaml.v3's parser errors.
var parserProblems = []string{
	"did not find expected ',' or '}'",
	"did not find expected ',' or ']'",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected node content",
	"did not find expected <document start>",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntaxError reports a YAML parse error at the line it names (yaml.v3
// does not report columns).
func (l *loader) syntaxError(err error) {
	msg := err.Error()
	p := diag.Pos{Line: 1, Col: 1}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil && n > 0 {
			p.Line = n
		}
		msg = m[2]
		// yaml.v3 reports the lines of parser errors (unlike those of
		// scanner errors) counting from 0.
		for _, prefix := range parserProblems {
			if strings.HasPrefix(msg, prefix) {
				p.Line++
				break
			}
		}
		if strings.HasPrefix(msg, "mapping values are not allowed") {
			if at, text, ok := deeperLine(l.src, p.Line); ok {
				l.diags.Add(at, "%s", text)
				return
			}
		}
		for _, prefix := range blockProblems {
			if strings.HasPrefix(msg, prefix) {
				if at, text, ok := misplacedLine(l.src, err.Error(), msg, p.Line); ok {
					l.diags.Add(at, "%s", text)
					return
				}
			}
		}
	} else if len(msg) > 6 && msg[:6] == "yaml: " {
		msg = msg[6:]
	}
	// yaml.v3 reports a tab as a character that cannot start any token:
	// name it, where it is.
	if strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab character") {
		if col := tabColumn(l.src, p.Line); col > 0 {
			l.diags.Add(diag.Pos{Line: p.Line, Col: col}, "yaml syntax error: a tab character: YAML indents with spaces only (replace the tab with spaces)")
			return
		}
	}
	l.diags.Add(p, "yaml syntax error: %s", msg)
}

// tabColumn returns the 1-based column of the first tab on line n of src,
// or 0 when it has none.
func tabColumn(src []byte, n int) int {
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return 0
	}
	return bytes.IndexByte(lines[n-1], '\t') + 1
}

// checkAnchors reports every anchor and alias: the schema format has none.
func (l *loader) checkAnchors(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		l.diags.Add(pos(n), "YAML aliases are not supported in a schema")
		return
	}
	if n.Anchor != "" {
		l.diags.Add(pos(n), "YAML anchors are not supported in a schema")
	}
	for _, c := range n.Content {
		l.checkAnchors(c)
	}
}

func pos(n *yaml.Node) diag.Pos { return diag.Pos{Line: n.Line, Col: n.Column} }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// entry is one key and value of a mapping.
type entry struct {
	key *yaml.Node
	val *yaml.Node
}

// pairs checks that n is a mapping (or, with nullOK, nothing) and returns
// its entries in order, reporting non-scalar and duplicate keys. what names
// the mapping in messages.
func (l *loader) pairs(n *yaml.Node, what string, nullOK bool) []entry {
	if nullOK && isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind != yaml.AliasNode {
			l.diags.Add(pos(n), "%s must be a mapping, found %s", what, kindName(n))
		}
		return nil
	}
	seen := make(map[string]bool, len(n.Content)/2)
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			if k.Kind != yaml.AliasNode {
				l.diags.Add(pos(k), "keys of %s must be plain names, found %s", what, kindName(k))
			}
			continue
		}
		if seen[k.Value] {
			l.diags.Add(pos(k), "duplicate key %q in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		out = append(out, entry{key: k, val: v})
	}
	return out
}

// fields is pairs for a mapping with a fixed set of keys: a key outside
// allowed is reported and dropped.
func (l *loader) fields(n *yaml.Node, what string, nullOK bool, allowed ...string) []entry {
	entries, _ := l.keyed(n, what, nullOK, nil, allowed...)
	return entries
}

// keyed is fields that also returns the allowed keys that misspelt keys of
// the mapping stood for (see Misspelt). explain, when not nil, gives the
// message of an unknown key that is no misspelling (a key that belongs
// elsewhere), or "" for the usual one.
func (l *loader) keyed(n *yaml.Node, what string, nullOK bool, explain func(key string) string, allowed ...string) ([]entry, Misspelt) {
	all := l.pairs(n, what, nullOK)
	present := make(map[string]bool, len(all))
	for _, e := range all {
		present[e.key.Value] = true
	}
	var misspelt Misspelt
	out := all[:0]
	for _, e := range all {
		if slices.Contains(allowed, e.key.Value) {
			out = append(out, e)
			continue
		}
		if explain != nil {
			if msg := explain(e.key.Value); msg != "" {
				l.diags.Add(pos(e.key), "%s", msg)
				continue
			}
		}
		guess := diag.Closest(e.key.Value, allowed)
		if guess != "" && !present[guess] {
			if misspelt == nil {
				misspelt = make(Misspelt)
			}
			misspelt[guess] = pos(e.key)
		}
		l.diags.Add(pos(e.key), "unknown key %q in %s%s", e.key.Value, what, diag.Suggest(e.key.Value, allowed))
	}
	return out, misspelt
}

// scalar returns n as a Scalar, or nil (with a diagnostic) when n is a
// mapping or a list.
func (l *loader) scalar(n *yaml.Node, what string) *Scalar {
	if n.Kind != yaml.ScalarNode {
		if n.Kind != yaml.AliasNode {
			l.diags.Add(pos(n), "%s must be a single value, found %s", what, kindName(n))
		}
		return nil
	}
	return &Scalar{Value: n.Value, Tag: n.ShortTag(), Pos: pos(n)}
}

// BadTag is the Tag of a Scalar that stands for a value already reported as
// malformed: it is present, but must not be checked further.
const BadTag = "!!bad"

// present is scalar for a required value: a malformed one comes back as a
// BadTag placeholder, so that it does not also count as missing.
func (l *loader) present(n *yaml.Node, what string) *Scalar {
	if s := l.scalar(n, what); s != nil {
		return s
	}
	return &Scalar{Tag: BadTag, Pos: pos(n)}
}

// isMapping reports whether n is a mapping (aliases are reported apart).
func isMapping(n *yaml.Node) bool { return n.Kind == yaml.MappingNode }

// name returns a mapping key as a Scalar.
func name(k *yaml.Node) Scalar {
	return Scalar{Value: k.Value, Tag: k.ShortTag(), Pos: pos(k)}
}

// list returns the scalars of a sequence.
func (l *loader) list(n *yaml.Node, what string) []Scalar {
	if n.Kind != yaml.SequenceNode {
		if n.Kind != yaml.AliasNode {
			l.diags.Add(pos(n), "%s must be a list, found %s", what, kindName(n))
		}
		return nil
	}
	out := make([]Scalar, 0, len(n.Content))
	for _, c := range n.Content {
		if s := l.scalar(c, "an item of "+what); s != nil {
			out = append(out, *s)
		}
	}
	return out
}
