package delivery

import (
	"reflect"
)

// Value returns e as a value, dereferencing a pointer to an event; false
// for a nil event or a nil pointer. Test kits take events and pointers to
// events alike, and deliver values.
func Value[E any](e E) (E, bool) {
	var zero E
	rv := reflect.ValueOf(any(e))
	switch {
	case !rv.IsValid():
		return zero, false
	case rv.Kind() != reflect.Pointer:
		return e, true
	case rv.IsNil():
		return zero, false
	}
	v, ok := rv.Elem().Interface().(E)
	return v, ok
}

// Sequence returns copies of events with their version field (named
// field, an integer) set to 1, 2, 3 and on for each key, in the order
// given: the versions the single writer of each entity gives. Pointers
// become values; nil events are left out. It panics if an event has no
// integer field of that name: a generated test kit names its entity's.
func Sequence[K comparable, E interface{ EventKey() K }](field string, events []E) []E {
	next := make(map[K]uint64)
	out := make([]E, 0, len(events))
	for _, e := range events {
		v, ok := Value(e)
		if !ok {
			continue
		}
		key := v.EventKey()
		next[key]++
		c := reflect.New(reflect.TypeOf(any(v))).Elem()
		c.Set(reflect.ValueOf(any(v)))
		f := c.FieldByName(field)
		switch f.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(next[key])
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(int64(next[key]))
		default:
			panic("delivery: Sequence: " + c.Type().String() + " has no integer field " + field)
		}
		out = append(out, c.Interface().(E))
	}
	return out
}
