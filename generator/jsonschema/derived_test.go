package jsonschema

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
)

// at returns the node of the JSON Schema at the slash-separated path.
func at(t *testing.T, root map[string]any, path string) map[string]any {
	t.Helper()
	node := root
	for _, part := range strings.Split(path, "/") {
		next, ok := node[part].(map[string]any)
		if !ok {
			t.Fatalf("the JSON Schema has no %s", path)
		}
		node = next
	}
	return node
}

func parsed(t *testing.T) map[string]any {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestEnumerationsAreTheGenerators checks each enumeration of the JSON
// Schema against the values validate accepts, which for the policies are
// the names of the runtime's own types (validate.Enumerations): a value
// added to the runtime must be added here, in the same order.
func TestEnumerationsAreTheGenerators(t *testing.T) {
	root := parsed(t)
	enums := validate.Enumerations()
	for key, path := range map[string]string{
		"delivery":          "$defs/delivery",
		"on_exhausted":      "$defs/on_exhausted",
		"retry.jitter":      "$defs/retry/properties/jitter",
		"backlog.when_full": "$defs/backlog/properties/when_full",
		"kind":              "$defs/event/properties/kind",
		"on_gap":            "$defs/entity/properties/on_gap",
		"wire_names":        "$defs/wire_names",
	} {
		var got []string
		for _, v := range at(t, root, path)["enum"].([]any) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, enums[key]) {
			t.Errorf("%s: the JSON Schema enumerates %v, the generator accepts %v", path, got, enums[key])
		}
		delete(enums, key)
	}
	for key := range enums {
		t.Errorf("the enumeration of %s is not checked against the JSON Schema", key)
	}
}

// TestPolicyKeysAreTheLoaders checks that defaults: and an entity take, in
// the JSON Schema, exactly the policy keys that package schema loads, so
// that a key added to the loader is not forgotten here.
func TestPolicyKeysAreTheLoaders(t *testing.T) {
	root := parsed(t)
	defs := at(t, root, "$defs")
	var got []string
	for key := range at(t, root, "properties/defaults/properties") {
		sub, ok := defs[key].(map[string]any)["properties"].(map[string]any)
		if !ok {
			got = append(got, key)
			continue
		}
		for s := range sub {
			got = append(got, key+"."+s)
		}
	}
	want := schema.PolicyKeys()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("defaults: in the JSON Schema takes %v,\nthe loader %v", got, want)
	}
	entity := at(t, root, "$defs/entity/properties")
	for key := range at(t, root, "properties/defaults/properties") {
		if _, ok := entity[key]; !ok {
			t.Errorf("an entity in the JSON Schema takes no %s", key)
		}
	}
}
