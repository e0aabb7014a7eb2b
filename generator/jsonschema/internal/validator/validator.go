// Package validator checks JSON values against a JSON Schema, for the
// keywords that ordergen.schema.json uses (type, enum, const, pattern,
// minLength, minimum, maximum, minItems, uniqueItems, items,
// minProperties, required, properties, additionalProperties,
// propertyNames, and local $ref, which in draft-07 makes the keywords
// beside it ignored). A keyword it does not know is a violation, so that
// the schema cannot come to rely on one that the tests would silently
// ignore. It serves the tests of the JSON Schema and of the files that
// must pass it.
package validator

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Validator checks JSON values, as encoding/json decodes them into any.
type Validator struct {
	root map[string]any
}

// New returns a validator for the JSON Schema schema.
func New(schema []byte) (*Validator, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("parse the schema: %w", err)
	}
	return &Validator{root: root}, nil
}

// Validate returns every violation of the schema by instance, each as
// "path: what", sorted; none when instance is valid.
func (v *Validator) Validate(instance any) []string {
	var errs []string
	v.check(v.root, instance, "$", &errs)
	sort.Strings(errs)
	return errs
}

func (v *Validator) resolve(ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	var node any = v.root
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, part)
		}
		node = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not a schema", ref)
	}
	return m, nil
}

func jsonType(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func typeMatches(want string, x any) bool {
	got := jsonType(x)
	return got == want || want == "number" && got == "integer"
}

func (v *Validator) check(s map[string]any, x any, path string, errs *[]string) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, path+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			fail("%v", err)
			return
		}
		// draft-07: the keywords beside $ref are ignored.
		v.check(target, x, path, errs)
		return
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kw := s[k]
		switch k {
		case "type":
			var types []string
			switch t := kw.(type) {
			case string:
				types = []string{t}
			case []any:
				for _, e := range t {
					types = append(types, e.(string))
				}
			}
			if !slices.ContainsFunc(types, func(t string) bool { return typeMatches(t, x) }) {
				fail("is %s, want %s", jsonType(x), strings.Join(types, " or "))
			}
		case "enum":
			if !slices.ContainsFunc(kw.([]any), func(e any) bool { return reflect.DeepEqual(e, x) }) {
				fail("%v is not one of %v", x, kw)
			}
		case "const":
			if !reflect.DeepEqual(kw, x) {
				fail("%v is not %v", x, kw)
			}
		case "pattern":
			if str, ok := x.(string); ok && !regexp.MustCompile(kw.(string)).MatchString(str) {
				fail("%q does not match %s", str, kw)
			}
		case "minLength":
			if str, ok := x.(string); ok && float64(len([]rune(str))) < kw.(float64) {
				fail("%q is shorter than %v", str, kw)
			}
		case "minimum":
			if n, ok := x.(float64); ok && n < kw.(float64) {
				fail("%v is below %v", n, kw)
			}
		case "maximum":
			if n, ok := x.(float64); ok && n > kw.(float64) {
				fail("%v is above %v", n, kw)
			}
		case "minItems":
			if a, ok := x.([]any); ok && float64(len(a)) < kw.(float64) {
				fail("has %d items, fewer than %v", len(a), kw)
			}
		case "uniqueItems":
			if a, ok := x.([]any); ok && kw == true {
				for i := range a {
					for j := i + 1; j < len(a); j++ {
						if reflect.DeepEqual(a[i], a[j]) {
							fail("items %d and %d are equal", i, j)
						}
					}
				}
			}
		case "items":
			if a, ok := x.([]any); ok {
				for i, e := range a {
					v.check(kw.(map[string]any), e, fmt.Sprintf("%s[%d]", path, i), errs)
				}
			}
		case "minProperties":
			if m, ok := x.(map[string]any); ok && float64(len(m)) < kw.(float64) {
				fail("has %d properties, fewer than %v", len(m), kw)
			}
		case "required":
			if m, ok := x.(map[string]any); ok {
				for _, r := range kw.([]any) {
					if _, ok := m[r.(string)]; !ok {
						fail("lacks required %q", r)
					}
				}
			}
		case "properties", "additionalProperties", "propertyNames":
			if k == "properties" {
				v.checkObject(s, x, path, errs)
			} else if _, has := s["properties"]; !has {
				v.checkObject(s, x, path, errs)
			}
		case "$schema", "$id", "title", "description", "$defs":
		default:
			fail("the validator does not know keyword %q", k)
		}
	}
}

// checkObject applies properties, additionalProperties and propertyNames.
func (v *Validator) checkObject(s map[string]any, x any, path string, errs *[]string) {
	m, ok := x.(map[string]any)
	if !ok {
		return
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := path + "." + name
		if pn, ok := s["propertyNames"].(map[string]any); ok {
			v.check(pn, name, p+" (name)", errs)
		}
		if ps, ok := props[name]; ok {
			v.check(ps.(map[string]any), m[name], p, errs)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				*errs = append(*errs, p+": unknown property")
			}
		case map[string]any:
			v.check(ap, m[name], p, errs)
		}
	}
}

// FromYAML converts a YAML document to the value encoding/json decodes
// from the same data written as JSON.
func FromYAML(src []byte) (any, error) {
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("to json: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("from json: %w", err)
	}
	return out, nil
}
