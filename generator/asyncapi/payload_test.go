package asyncapi

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/ordergen/ordergen/generator/ir"
)

// goType is the Go type of a field type of testdata/types.txtar.
func goType(t *testing.T, ft *ir.Type) reflect.Type {
	t.Helper()
	switch ft.Kind {
	case ir.Builtin:
		types := map[string]reflect.Type{
			"bool": reflect.TypeFor[bool](), "string": reflect.TypeFor[string](),
			"int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](),
			"int32": reflect.TypeFor[int32](), "rune": reflect.TypeFor[rune](), "int64": reflect.TypeFor[int64](),
			"uint": reflect.TypeFor[uint](), "uint8": reflect.TypeFor[uint8](), "byte": reflect.TypeFor[byte](),
			"uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](), "uint64": reflect.TypeFor[uint64](),
			"uintptr": reflect.TypeFor[uintptr](), "float32": reflect.TypeFor[float32](), "float64": reflect.TypeFor[float64](),
			"complex64": reflect.TypeFor[complex64](), "complex128": reflect.TypeFor[complex128](),
		}
		if rt, ok := types[ft.Name]; ok {
			return rt
		}
	case ir.Named:
		switch ft.Schema() {
		case "time.Time":
			return reflect.TypeFor[time.Time]()
		case "time.Duration":
			return reflect.TypeFor[time.Duration]()
		case "net/netip.Addr":
			return reflect.TypeFor[netip.Addr]()
		}
	case ir.Slice:
		return reflect.SliceOf(goType(t, ft.Elem))
	case ir.Map:
		return reflect.MapOf(goType(t, ft.Key), goType(t, ft.Elem))
	case ir.Pointer:
		return reflect.PointerTo(goType(t, ft.Elem))
	}
	t.Fatalf("no Go type for %s", ft.Schema())
	return nil
}

// samples returns values of rt: its zero value, its extremes, and random
// ones (with nil and empty slices, maps and pointers among them).
func samples(rt reflect.Type, r *rand.Rand, depth int) []reflect.Value {
	out := []reflect.Value{reflect.Zero(rt)}
	switch rt {
	case reflect.TypeFor[time.Time]():
		return append(out, reflect.ValueOf(time.Date(2026, 11, 30, 12, 30, 15, 123456789, time.FixedZone("X", 3600))))
	case reflect.TypeFor[netip.Addr]():
		return append(out, reflect.ValueOf(netip.MustParseAddr("10.0.0.1")), reflect.ValueOf(netip.MustParseAddr("::1")))
	}
	v := func(x any) reflect.Value { return reflect.ValueOf(x).Convert(rt) }
	switch rt.Kind() {
	case reflect.Bool:
		out = append(out, v(true))
	case reflect.String:
		out = append(out, v("a"), v("ünïcode \"quoted\"\n"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := rt.Bits()
		lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		out = append(out, reflect.New(rt).Elem(), reflect.New(rt).Elem(), reflect.New(rt).Elem())
		out[1].SetInt(lo)
		out[2].SetInt(hi)
		out[3].SetInt(r.Int64N(hi) - r.Int64N(hi))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		out = append(out, reflect.New(rt).Elem(), reflect.New(rt).Elem())
		out[1].SetUint(math.MaxUint64 >> (64 - rt.Bits()))
		out[2].SetUint(r.Uint64() >> (64 - rt.Bits()))
	case reflect.Float32, reflect.Float64:
		out = append(out, v(-1.5), v(r.Float64()*1e6))
	case reflect.Complex64, reflect.Complex128:
		out = append(out, v(complex(1, 2)))
	case reflect.Slice:
		empty := reflect.MakeSlice(rt, 0, 0)
		full := reflect.MakeSlice(rt, 0, 3)
		if depth < 3 {
			for _, e := range samples(rt.Elem(), r, depth+1) {
				full = reflect.Append(full, e)
			}
		}
		out = append(out, empty, full)
	case reflect.Map:
		full := reflect.MakeMap(rt)
		if depth < 3 {
			keys := samples(rt.Key(), r, depth+1)
			vals := samples(rt.Elem(), r, depth+1)
			for i, k := range keys {
				full.SetMapIndex(k, vals[i%len(vals)])
			}
		}
		out = append(out, reflect.MakeMap(rt), full)
	case reflect.Pointer:
		for _, e := range samples(rt.Elem(), r, depth+1) {
			p := reflect.New(rt.Elem())
			p.Elem().Set(e)
			out = append(out, p)
		}
	}
	return out
}

// TestFieldSchemasAreWhatEncodingJSONWrites checks the schema of every
// field of testdata/types.txtar against encoding/json's encodings of
// values of its Go type: the zero value, the extremes and random values,
// nil and empty ones. A type that encoding/json refuses (complex numbers)
// must have a schema that no value passes.
func TestFieldSchemasAreWhatEncodingJSONWrites(t *testing.T) {
	a, err := txtar.ParseFile(filepath.Join("testdata", "types.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := check(t, schemaOf(t, a), ".")
	doc, err := Document(pkg)
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, doc)
	r := rand.New(rand.NewPCG(1, 2))
	ev := pkg.Entities[0].Events[0]
	checked := 0
	for _, f := range ev.Fields {
		sch := s.at(t, "/components/schemas/"+ev.Name+"/properties/"+f.Wire)
		for _, v := range samples(goType(t, f.Type), r, 0) {
			data, err := json.Marshal(v.Interface())
			if err != nil {
				// Only what contains a complex number does not encode;
				// its schema must then pass nothing that encodes.
				if verr := validJSON(t, sch, []byte("0")); verr == nil {
					t.Errorf("%s %s: encoding/json refuses %#v (%v), but the schema passes 0", f.Name, f.Type, v.Interface(), err)
				}
				continue
			}
			checked++
			if err := validJSON(t, sch, data); err != nil {
				t.Errorf("%s %s: encoding/json writes %s, which the schema refuses: %v", f.Name, f.Type, data, err)
			}
		}
	}
	if checked < 60 {
		t.Errorf("only %d encodings checked", checked)
	}
}

// TestFieldSchemasRefuseWhatEncodingJSONNeverWrites checks that the
// schemas are not just permissive: each value below is one that
// encoding/json never writes for the field's type.
func TestFieldSchemasRefuseWhatEncodingJSONNeverWrites(t *testing.T) {
	a, err := txtar.ParseFile(filepath.Join("testdata", "types.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, mustDocument(t, check(t, schemaOf(t, a), ".")))
	for field, values := range map[string][]string{
		"ID":         {`""`, `1`},
		"Flag":       {`"true"`, `null`},
		"Tiny":       {`128`, `-129`, `1.5`, `"1"`},
		"Small":      {`-1`, `65536`},
		"Letter":     {`2147483648`},
		"Octet":      {`256`},
		"Ptr":        {`-1`},
		"Count":      {`null`, `"5"`},
		"Big":        {`-1`},
		"Ratio":      {`"1.5"`, `null`},
		"Wave":       {`0`, `null`, `[1, 2]`},
		"MaybeWave":  {`0`},
		"MaybeCount": {`"5"`, `1.5`},
		"MaybeAt":    {`5`},
		"Blob":       {`5`, `[1, 2]`},
		"Blobs":      {`["a", 5]`, `"a"`},
		"Names":      {`[1]`, `{}`},
		"ByName":     {`{"a": "1"}`, `[]`},
		"ByID":       {`{"x": "a"}`, `{"1.5": "a"}`},
		"ByOctet":    {`{"-1": true}`, `{"1": 1}`},
		"At":         {`5`, `null`},
		"Took":       {`"1s"`, `1.5`},
	} {
		sch := s.at(t, "/components/schemas/Sampled/properties/"+field)
		for _, v := range values {
			if err := validJSON(t, sch, []byte(v)); err == nil {
				t.Errorf("%s: the schema passes %s, which encoding/json never writes for it", field, v)
			}
		}
	}
}

func mustDocument(t *testing.T, pkg *ir.Package) []byte {
	t.Helper()
	doc, err := Document(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestExampleDocumentIsCommitted keeps examples/asyncapi.yaml what the
// example's schema gives (CI runs ordergen asyncapi -check too).
func TestExampleDocumentIsCommitted(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "examples", "asyncapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDocument(t, check(t, src, filepath.Join("..", "..", "examples"))); string(got) != string(want) {
		t.Error("examples/asyncapi.yaml is stale: run go run ./cmd/ordergen asyncapi -out examples/asyncapi.yaml examples/schema.yaml")
	}
}
