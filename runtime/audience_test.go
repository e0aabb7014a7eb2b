package runtime_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The runtime is split by audience: the root package keeps what handler
// authors and generated code use, and each other audience has a package of
// its own whose documentation says, in its first sentence, who it is for.
func TestPackagesSayWhoTheyAreFor(t *testing.T) {
	for _, dir := range []string{".", "transport", "meter", "durable", "sqlstore", "kafka", "rabbitmq", "pubsub", "sqs", "otelmetrics", "metricstest", "storetest", "transporttest", "transporttest/netfault", "delivery", "inspect", "console", "groupcommit"} {
		pkg := parseDir(t, dir)
		first := doc.Synopsis(pkg.Doc)
		if !strings.Contains(first, " is for ") {
			t.Errorf("package %s's first sentence does not say who it is for: %q", pkg.Name, first)
		}
	}
}

// The root package's documentation stays short: none of the other
// audiences' names is declared in it, and it declares at most as many
// top-level names as `go doc -short` can list in 60 lines.
func TestRootPackageKeepsToHandlerAuthors(t *testing.T) {
	pkg := parseDir(t, ".")
	moved := map[string]string{}
	for _, name := range []string{"Source", "NewSource", "Ownership", "Settlement", "Target", "Subscription", "CheckSubscriptions",
		"EngineTarget", "TopicTarget", "Sink", "AsyncSink", "Writer", "SyncWriter", "BufferingWriter", "OrderedSink", "NewOrderedSink",
		"SendAsync", "SendKeyed", "Keyed", "ErrKeyPaused", "ErrOwnershipEnded", "DoneContext"} {
		moved[name] = "transport"
	}
	for _, name := range []string{"MeterProvider", "Meter", "Counter", "Histogram", "Observer", "Instrument", "InstrumentKind",
		"Attribute", "AttributeSet", "MetricEvents", "AttrOutcome"} {
		moved[name] = "meter"
	}
	for _, name := range []string{"RawEvent", "DurableStore", "TxStore", "KeyTx", "Codec", "EncodeKey", "DecodeKey",
		"EncodedParks", "EncodedVersions", "EncodedStates", "ErrUnknownEventType"} {
		moved[name] = "durable"
	}
	lines := 0
	for _, decl := range docDecls(pkg) {
		if where, ok := moved[decl]; ok {
			t.Errorf("runtime declares %s, which belongs to runtime/%s", decl, where)
		}
		lines++
	}
	if lines > 60 {
		t.Errorf("runtime declares %d top-level names and constructors: go doc -short lists more than 60 lines", lines)
	}
}

// docDecls returns the names `go doc -short` lists: each exported constant
// or variable group (by its first name), type, function, and constructor
// listed under its type.
func docDecls(pkg *doc.Package) []string {
	var names []string
	group := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names[0])
		}
	}
	group(pkg.Consts)
	group(pkg.Vars)
	for _, f := range pkg.Funcs {
		names = append(names, f.Name)
	}
	for _, typ := range pkg.Types {
		names = append(names, typ.Name)
		group(typ.Consts)
		group(typ.Vars)
		for _, f := range typ.Funcs {
			names = append(names, f.Name)
		}
	}
	return names
}

func parseDir(t *testing.T, dir string) *doc.Package {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/ordergen/ordergen/runtime/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}
