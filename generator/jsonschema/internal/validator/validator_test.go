package validator

import (
	"encoding/json"
	"testing"
)

// TestValidator checks the validator itself on each keyword it knows.
func TestValidator(t *testing.T) {
	schema := `{"$defs": {"n": {"type": "integer", "minimum": 1, "maximum": 3}},
	"type": "object", "required": ["a"], "additionalProperties": false, "minProperties": 1,
	"properties": {
		"a": {"$ref": "#/$defs/n"},
		"b": {"type": ["string", "null"], "pattern": "^x", "minLength": 2},
		"c": {"type": "array", "items": {"enum": ["p", "q"]}, "minItems": 1, "uniqueItems": true},
		"d": {"type": "object", "propertyNames": {"pattern": "^[A-Z]"}, "additionalProperties": {"const": true}},
		"e": {"type": "number"}}}`
	v, err := New([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	for doc, fails := range map[string]bool{
		`{"a": 2}`:                      false,
		`{"a": 2, "b": null, "e": 1.5}`: false,
		`{"a": 1, "b": "xy", "c": ["p"], "d": {"K": true}}`: false,
		`{}`:                          true,
		`{"a": 0}`:                    true,
		`{"a": 4}`:                    true,
		`{"a": 1.5}`:                  true,
		`{"a": "1"}`:                  true,
		`{"a": 1, "z": 1}`:            true,
		`{"a": 1, "b": "yx"}`:         true,
		`{"a": 1, "b": "x"}`:          true,
		`{"a": 1, "c": []}`:           true,
		`{"a": 1, "c": ["r"]}`:        true,
		`{"a": 1, "c": ["p", "p"]}`:   true,
		`{"a": 1, "d": {"k": true}}`:  true,
		`{"a": 1, "d": {"K": false}}`: true,
		`{"a": 1, "e": "1"}`:          true,
	} {
		var x any
		if err := json.Unmarshal([]byte(doc), &x); err != nil {
			t.Fatal(err)
		}
		if errs := v.Validate(x); (len(errs) > 0) != fails {
			t.Errorf("%s: errors %v, want failure %v", doc, errs, fails)
		}
	}
	unknown, _ := New([]byte(`{"oneOf": []}`))
	if errs := unknown.Validate(nil); len(errs) == 0 {
		t.Error("an unknown keyword passed")
	}
}
