// Package templates holds the text/template files of what ordergen writes
// that is not Go code: the Markdown catalogue of a schema with its Mermaid
// state diagrams (ordergen docs) and the starter files of ordergen init.
// They are embedded, so that the ordergen binary needs no file beside it.
//
// Files:
//
//	catalogue.md.tmpl    the catalogue; it uses the "statediagram" template
//	statediagram.tmpl    one entity's Mermaid stateDiagram-v2
//	schema.yaml.tmpl     the starter schema of ordergen init
//	generate.go.tmpl     the starter generate.go of ordergen init
package templates

import (
	"embed"
	"fmt"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Parse parses the named template files with funcs into one template set
// named after the first; templates that fail on a missing map key.
func Parse(funcs template.FuncMap, names ...string) (*template.Template, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("templates: no template named")
	}
	t, err := template.New(names[0]).Option("missingkey=error").Funcs(funcs).ParseFS(files, names...)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	return t, nil
}
