package asyncapi

import (
	"bytes"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// The document is built as a tree of yaml.v3 nodes, so that mappings keep
// the order they are written in (the schema's, then the spec's usual one)
// rather than Go's sorted map keys, and the encoding is the same for the
// same tree.

// mapping is a YAML mapping under construction.
type mapping struct{ n *yaml.Node }

func newMapping() mapping { return mapping{&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}} }

// set appends key with value; a nil value leaves the key out.
func (m mapping) set(key string, value *yaml.Node) mapping {
	if value != nil {
		m.n.Content = append(m.n.Content, str(key), value)
	}
	return m
}

// text sets key to s, unless s is "".
func (m mapping) text(key, s string) mapping {
	if s == "" {
		return m
	}
	return m.set(key, str(s))
}

// node returns the mapping as a node, nil when it is empty.
func (m mapping) node() *yaml.Node {
	if len(m.n.Content) == 0 {
		return nil
	}
	return m.n
}

// empty reports whether nothing was set.
func (m mapping) empty() bool { return len(m.n.Content) == 0 }

// str is a string scalar; the encoder quotes it where YAML would read it
// as another type (3.0.0, true, 42).
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func integer(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func null() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }

// list is a sequence of nodes; with flow set, written [a, b].
func list(flow bool, items ...*yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

// strs is a flow sequence of strings.
func strs(ss ...string) *yaml.Node {
	items := make([]*yaml.Node, len(ss))
	for i, s := range ss {
		items[i] = str(s)
	}
	return list(true, items...)
}

// ref is a Reference Object: {$ref: target}.
func ref(target string) *yaml.Node { return newMapping().text("$ref", target).node() }

// encode writes the document after header, indented by two spaces.
func encode(header string, doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header + "\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode the document: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode the document: %w", err)
	}
	return buf.Bytes(), nil
}
