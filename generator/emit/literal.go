package emit

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/dave/jennifer/jen"
)

// Field is one keyed element of a struct literal. A nil Value leaves the
// field out: a zero field is not written.
type Field struct {
	// Name is the struct field's name.
	Name string
	// Value is its value's code, nil for none.
	Value jen.Code
}

// Keyed returns the braces and keyed elements of a struct literal, in the
// order given, which must be the struct's declaration order (Ordered sorts
// the fields of a runtime type into it): on one line for one field, one a
// line for more, as jen.Dict writes them, but without sorting them by name.
// Fields with a nil Value are left out.
func Keyed(fields ...Field) *jen.Statement {
	var items []jen.Code
	for _, f := range fields {
		if f.Value != nil {
			items = append(items, jen.Id(f.Name).Op(":").Add(f.Value))
		}
	}
	if len(items) < 2 {
		return jen.Values(items...)
	}
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, items...)
}

// Ordered returns fields sorted into the declaration order of the struct
// type t, a runtime type, so that a literal of it reads as its
// documentation does. A name that is not a field of t is a bug of the
// emitter: Ordered panics, and the golden tests find it.
func Ordered(t reflect.Type, fields ...Field) []Field {
	index := func(f Field) int {
		sf, ok := t.FieldByName(f.Name)
		if !ok {
			panic(fmt.Sprintf("emit: %s has no field %s", t, f.Name))
		}
		return sf.Index[0]
	}
	out := slices.Clone(fields)
	slices.SortStableFunc(out, func(a, b Field) int { return index(a) - index(b) })
	return out
}

// policyValue returns the Go code of v, a policy in the runtime's types
// (ir.Policy's fields): a struct as its literal, without its zero fields;
// a duration as 5 * time.Second; a runtime policy (runtime.ExhaustedPolicy,
// runtime.FullPolicy) as its constant, even the zero one, which names the
// schema's choice (runtime.ParkKey); a number as itself.
func policyValue(v reflect.Value) jen.Code {
	t := v.Type()
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return duration(time.Duration(v.Int()))
	case isRuntimePolicy(t):
		return rt(constName(v.Interface().(fmt.GoStringer)))
	case t.Kind() == reflect.Struct:
		var fields []Field
		for i := range t.NumField() {
			if f := v.Field(i); t.Field(i).IsExported() && (!f.IsZero() || isRuntimePolicy(f.Type())) {
				fields = append(fields, Field{t.Field(i).Name, policyValue(f)})
			}
		}
		return goType(t).Add(Keyed(fields...))
	}
	return jen.Lit(v.Interface())
}

// isRuntimePolicy reports whether t is one of the runtime's policy types:
// named constants with String and GoString methods.
func isRuntimePolicy(t reflect.Type) bool {
	return t.PkgPath() == RuntimePath && t.Kind() == reflect.Uint8 && t.Implements(reflect.TypeFor[fmt.GoStringer]())
}

// goType returns the Go code of t, a type of a policy value: a runtime
// type, time.Duration or a predeclared type.
func goType(t reflect.Type) *jen.Statement {
	switch t.PkgPath() {
	case RuntimePath:
		return rt(t.Name())
	case "time":
		return jen.Qual("time", t.Name())
	}
	return jen.Id(t.Name())
}
