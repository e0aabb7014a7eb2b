package asyncapi

import (
	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/ir"
)

// A payload is what the generated codec (AccountCodec) writes for an event:
// encoding/json's object of the event's struct, whose fields carry no
// omitempty, so every field is always present, under its wire name. The
// JSON Schema of each Go type below is what encoding/json makes of it.

// intRange are the bounds of the integer types narrow enough to state
// exactly; the 64-bit ones get a format instead.
var intRange = map[string][2]int64{
	"int8": {-1 << 7, 1<<7 - 1}, "int16": {-1 << 15, 1<<15 - 1}, "int32": {-1 << 31, 1<<31 - 1}, "rune": {-1 << 31, 1<<31 - 1},
	"uint8": {0, 1<<8 - 1}, "byte": {0, 1<<8 - 1}, "uint16": {0, 1<<16 - 1}, "uint32": {0, 1<<32 - 1},
}

// typeSchema returns the JSON Schema of the values of t as encoding/json
// encodes them.
func typeSchema(t *ir.Type) mapping {
	m := newMapping()
	switch t.Kind {
	case ir.Builtin:
		return builtinSchema(t.Name)
	case ir.Named:
		switch {
		case t.Path == "time" && t.Name == "Time":
			return m.text("type", "string").text("format", "date-time")
		case t.Path == "time" && t.Name == "Duration":
			return m.text("type", "integer").text("format", "int64").text("description", "A duration in nanoseconds (time.Duration).")
		}
		// Its encoding is its own (MarshalJSON, MarshalText, or its
		// exported fields): any JSON value, described.
		return m.text("description", "A "+t.Schema()+", as its own JSON encoding writes it.")
	case ir.Slice:
		if t.Elem.Kind == ir.Builtin && (t.Elem.Name == "byte" || t.Elem.Name == "uint8") {
			return m.set("type", strs("string", "null")).text("contentEncoding", "base64")
		}
		return m.set("type", strs("array", "null")).set("items", typeSchema(t.Elem).n)
	case ir.Map:
		m.set("type", strs("object", "null"))
		if t.Key.Kind == ir.Builtin {
			// encoding/json writes integer keys in decimal.
			switch {
			case isUnsigned(t.Key.Name):
				m.set("propertyNames", newMapping().text("pattern", "^[0-9]+$").n)
			case isInteger(t.Key.Name):
				m.set("propertyNames", newMapping().text("pattern", "^-?[0-9]+$").n)
			}
		}
		return m.set("additionalProperties", typeSchema(t.Elem).n)
	case ir.Pointer:
		return nullable(typeSchema(t.Elem))
	}
	return m
}

func isInteger(name string) bool {
	switch name {
	case "int", "int8", "int16", "int32", "int64", "rune":
		return true
	}
	return isUnsigned(name)
}

func isUnsigned(name string) bool {
	switch name {
	case "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "byte":
		return true
	}
	return false
}

func builtinSchema(name string) mapping {
	m := newMapping()
	switch name {
	case "string":
		return m.text("type", "string")
	case "bool":
		return m.text("type", "boolean")
	case "int", "int64":
		return m.text("type", "integer").text("format", "int64")
	case "uint", "uint64", "uintptr":
		return m.text("type", "integer").set("minimum", integer(0)).text("format", "uint64")
	case "float32":
		return m.text("type", "number").text("format", "float")
	case "float64":
		return m.text("type", "number").text("format", "double")
	case "complex64", "complex128":
		// encoding/json refuses complex numbers: no event with one
		// encodes, so no value is valid.
		return m.text("description", "A "+name+": encoding/json cannot encode it, so the codec refuses the event.").set("not", newMapping().n)
	}
	if r, ok := intRange[name]; ok {
		return m.text("type", "integer").set("minimum", integer(r[0])).set("maximum", integer(r[1]))
	}
	return m
}

// nullable returns s that also allows null, as a nil pointer encodes.
func nullable(s mapping) mapping {
	c := s.n.Content
	for i := 0; i+1 < len(c); i += 2 {
		switch c[i].Value {
		case "type":
			if c[i+1].Kind == yaml.ScalarNode {
				c[i+1] = strs(c[i+1].Value, "null")
			}
			return s
		case "not":
			// Only nil encodes.
			return newMapping().text("type", "null")
		}
	}
	return s // no type: any value, null included
}
