package asyncapi

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	ledger "github.com/ordergen/ordergen/examples/gen"
)

// TestExamplePayloadsAreTheCodecsEncodings encodes every event of the
// example with its generated codec (examples/gen: the code the schema
// generates), with its fields zero and filled with random values, and
// checks each encoding against the payload schema of examples/asyncapi.yaml:
// the document describes what the codecs write, wire names included.
func TestExamplePayloadsAreTheCodecsEncodings(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := check(t, src, filepath.Join("..", "..", "examples"))
	doc, err := os.ReadFile(filepath.Join("..", "..", "examples", "asyncapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, doc)
	codecs := map[string]any{
		"Account": ledger.AccountCodec{}, "Order": ledger.OrderCodec{}, "Rider": ledger.RiderCodec{},
		"Webhook": ledger.WebhookCodec{}, "Wallet": ledger.WalletCodec{}, "Customer": ledger.CustomerCodec{},
	}
	if len(codecs) != len(pkg.Entities) {
		t.Fatalf("%d codecs for %d entities: list the new entity's codec here", len(codecs), len(pkg.Entities))
	}
	r := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for _, e := range pkg.Entities {
		codec := reflect.ValueOf(codecs[e.Name])
		for _, ev := range e.Events {
			sch := s.at(t, "/components/schemas/"+ev.Name)
			// The key and version as a publisher takes them: a key that
			// is not empty, a version from 1.
			seed := map[string]any{e.Key.Wire: "k-1"}
			if e.Key.Type.Name != "string" {
				seed[e.Key.Wire] = 7
			}
			if e.Version != nil {
				seed[e.Version.Wire] = 1
			}
			data, err := json.Marshal(seed)
			if err != nil {
				t.Fatal(err)
			}
			out := codec.MethodByName("Decode").Call([]reflect.Value{reflect.ValueOf(ev.Name), reflect.ValueOf(data)})
			if err, _ := out[1].Interface().(error); err != nil {
				t.Fatalf("%s: decode %s: %v", ev.Name, data, err)
			}
			event := reflect.New(out[0].Elem().Type()).Elem()
			event.Set(out[0].Elem())
			for round := range 4 {
				if round > 0 {
					for _, f := range ev.Fields {
						field := event.FieldByName(f.Name)
						vals := samples(field.Type(), r, 0)
						field.Set(vals[r.IntN(len(vals))])
					}
				}
				enc := codec.MethodByName("Encode").Call([]reflect.Value{event})
				if err, _ := enc[2].Interface().(error); err != nil {
					t.Fatalf("%s: encode %#v: %v", ev.Name, event.Interface(), err)
				}
				payload := enc[1].Bytes()
				if err := validJSON(t, sch, payload); err != nil {
					t.Errorf("%s: the codec writes %s, which the payload schema refuses: %v", ev.Name, payload, err)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no event checked")
	}
}
