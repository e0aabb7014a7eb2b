package templates

import (
	"testing"
	"text/template"
)

func TestParse(t *testing.T) {
	funcs := template.FuncMap{"join": func([]string, string) string { return "" }, "article": func(string) string { return "" }}
	for _, names := range [][]string{{"catalogue.md.tmpl", "statediagram.tmpl"}, {"schema.yaml.tmpl"}, {"generate.go.tmpl"}} {
		if _, err := Parse(funcs, names...); err != nil {
			t.Errorf("%v: %v", names, err)
		}
	}
	if _, err := Parse(nil, "missing.tmpl"); err == nil {
		t.Error("a missing template parsed")
	}
	if _, err := Parse(nil); err == nil {
		t.Error("no names parsed")
	}
}
