package testkit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
)

func TestFiles(t *testing.T) {
	src := []byte(`version: 1
package: shop
entities:
  Order:
    key: {field: OrderID, type: int32}
    version: {field: Rev, type: uint16}
    events:
      OrderPlaced: {fields: {Total: int64}, kind: snapshot}
      OrderPaid: {}
  Ping:
    key: {field: ID, type: string}
    events: {Pinged: {}}
`)
	f, diags := schema.Load(src)
	if f == nil || diags.Len() > 0 {
		t.Fatal(diags.Format("schema.yaml"))
	}
	pkg, diags := validate.Check(f, nil)
	if pkg == nil {
		t.Fatal(diags.Format("schema.yaml"))
	}
	if _, err := Files(pkg, ""); err == nil {
		t.Error("Files without an import path succeeded")
	}
	files, err := Files(pkg, "example.com/shop/gen")
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, f := range files {
		if !strings.HasPrefix(f.Name, "shoptest/") {
			t.Errorf("file %s is not in shoptest/", f.Name)
		}
		all.Write(f.Contents)
	}
	for _, want := range []string{
		"package shoptest",
		`"example.com/shop/gen"`,
		"func NewOrderHarness(handler shop.OrderHandler, opts ...shop.OrderOption) (*OrderHarness, error) {",
		"Versioned: true",
		"Snapshot: orderSnapshot,",
		`return delivery.Sequence[int32, shop.OrderEvent]("Rev", events)`,
		"func SequenceOrder(events ...shop.OrderEvent) []shop.OrderEvent {",
		"delivery.Recording[int32, shop.OrderEvent]",
		"type PingHarness = delivery.Harness[string, shop.PingEvent, *shop.PingDispatcher]",
		"Guard:  delivery.Guard{},",
		"case shop.OrderPlaced:\n\t\treturn true",
	} {
		if !bytes.Contains(all.Bytes(), []byte(want)) {
			t.Errorf("the kit lacks %q", want)
		}
	}
	if bytes.Contains(all.Bytes(), []byte("func SequencePing(")) {
		t.Error("SequencePing generated for an entity without a version")
	}
}

// TestKitArticle checks the article before a qualified name of a package
// whose name starts with a vowel: "an orders.OrderHandler".
func TestKitArticle(t *testing.T) {
	f, diags := schema.Load([]byte("version: 1\npackage: orders\nentities: {Order: {key: {field: ID, type: string}, events: {Placed: {}}}}\n"))
	if f == nil || diags.Len() > 0 {
		t.Fatal(diags.Format("schema.yaml"))
	}
	pkg, diags := validate.Check(f, nil)
	if pkg == nil {
		t.Fatal(diags.Format("schema.yaml"))
	}
	files, err := Files(pkg, "example.com/orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if bytes.Contains(f.Contents, []byte("is a orders.")) {
			t.Errorf("%s: %q before orders.OrderHandler", f.Name, "a")
		}
		if strings.HasSuffix(f.Name, "recorders.go") && !bytes.Contains(f.Contents, []byte("is an orders.OrderHandler")) {
			t.Errorf("%s has no \"is an orders.OrderHandler\":\n%s", f.Name, f.Contents)
		}
	}
}
