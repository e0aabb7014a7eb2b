package generator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/delivery"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/meter"
)

// runtimeStructs are the runtime's struct types that generated code writes
// literals of, by their qualified name.
var runtimeStructs = map[string]reflect.Type{
	"runtime.Config":  reflect.TypeFor[runtime.Config[string, any]](),
	"runtime.Backlog": reflect.TypeFor[runtime.Backlog](),
	"runtime.Retry":   reflect.TypeFor[runtime.Retry](),
	"meter.Attribute": reflect.TypeFor[meter.Attribute](),
	"delivery.Guard":  reflect.TypeFor[delivery.Guard](),
	"inspect.Engines": reflect.TypeFor[inspect.Engines[string, int]](),
	// Group commit (group:).
	"groupcommit.Config": reflect.TypeFor[groupcommit.Config](),
	"groupcommit.Result": reflect.TypeFor[groupcommit.Result](),
	"durable.KeyState":   reflect.TypeFor[durable.KeyState](),
}

// TestStructLiteralsInDeclarationOrder checks every keyed struct literal of
// every golden output: its fields come in the order the struct declares
// them, and none is set to a zero literal (false, 0, "", nil), which says
// nothing.
func TestStructLiteralsInDeclarationOrder(t *testing.T) {
	checked := 0
	for _, c := range loadGolden(t) {
		// The fields of the structs each package declares, in order.
		fields := map[string]map[string][]string{}
		parsed := map[string]*ast.File{}
		for _, f := range output(t, c) {
			if !strings.HasSuffix(f.Name, ".go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Data, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed[f.Name] = file
			dir := f.Name[:strings.LastIndex(f.Name, "/")+1]
			if fields[dir] == nil {
				fields[dir] = map[string][]string{}
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, name := range fl.Names {
								fields[dir][ts.Name.Name] = append(fields[dir][ts.Name.Name], name.Name)
							}
						}
					}
				}
				return true
			})
		}
		for name, file := range parsed {
			dir := name[:strings.LastIndex(name, "/")+1]
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok || len(lit.Elts) == 0 {
					return true
				}
				if _, keyed := lit.Elts[0].(*ast.KeyValueExpr); !keyed {
					return true
				}
				order := declared(lit.Type, fields[dir])
				if order == nil {
					return true // a map, or a type the check does not know
				}
				checked++
				last := -1
				for _, el := range lit.Elts {
					kv := el.(*ast.KeyValueExpr)
					key := kv.Key.(*ast.Ident).Name
					i := indexOf(order, key)
					if i <= last {
						t.Errorf("%s/%s: field %s of %s is out of declaration order %v", c.name, name, key, types(lit.Type), order)
					}
					last = i
					if zeroLiteral(kv.Value) {
						t.Errorf("%s/%s: field %s of %s is set to its zero value", c.name, name, key, types(lit.Type))
					}
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no keyed struct literal found: the test checks nothing")
	}
}

// declared returns the field names of the struct type expr, in order: a
// type of the package (structs), or a runtime type; nil for another.
func declared(expr ast.Expr, structs map[string][]string) []string {
	if ix, ok := expr.(*ast.IndexListExpr); ok {
		expr = ix.X
	}
	switch x := expr.(type) {
	case *ast.Ident:
		return structs[x.Name]
	case *ast.SelectorExpr:
		t, ok := runtimeStructs[types(x)]
		if !ok {
			return nil
		}
		var out []string
		for i := range t.NumField() {
			out = append(out, t.Field(i).Name)
		}
		return out
	}
	return nil
}

func types(expr ast.Expr) string {
	switch x := expr.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return types(x.X) + "." + x.Sel.Name
	case *ast.IndexListExpr:
		return types(x.X)
	}
	return "?"
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// zeroLiteral reports whether e is false, nil, 0 or "".
func zeroLiteral(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "false" || x.Name == "nil"
	case *ast.BasicLit:
		return x.Value == "0" || x.Value == `""` || x.Value == "0.0"
	}
	return false
}
