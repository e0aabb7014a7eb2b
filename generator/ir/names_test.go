package ir

import (
	"reflect"
	"testing"
)

// TestDeclsHoldEveryName checks that every top-level name in Names is in
// Decls, which validate reserves: a name added to Names and not to Decls
// would be generated without a check for clashes. Seal, Inspector and the
// handlers' methods are methods, not top-level names.
func TestDeclsHoldEveryName(t *testing.T) {
	n := NamesOf("Account")
	decls := make(map[string]Decl)
	for _, d := range n.Decls() {
		if prev, dup := decls[d.Name]; dup {
			t.Errorf("%s is declared twice (%s and %s)", d.Name, prev.Role, d.Role)
		}
		decls[d.Name] = d
	}
	methods := map[string]bool{"Seal": true, "Inspector": true, "Resync": true, "HandleBatch": true, "HandleChanged": true}
	v := reflect.ValueOf(n)
	for i := range v.NumField() {
		field, name := v.Type().Field(i).Name, v.Field(i).String()
		if methods[field] {
			continue
		}
		d, ok := decls[name]
		switch {
		case !ok:
			t.Errorf("Names.%s (%s) is not in Decls", field, name)
		case d.Role != field:
			t.Errorf("Names.%s (%s) has the role %q in Decls", field, name, d.Role)
		}
	}
	if len(decls) != v.NumField()-len(methods) {
		t.Errorf("Decls has %d names, Names %d top-level ones", len(decls), v.NumField()-len(methods))
	}
}

// TestEntityDecls checks that an entity's names include its states'
// constants and its events' structs, each with what it was made from.
func TestEntityDecls(t *testing.T) {
	e := &Entity{
		Name: "Order", Names: NamesOf("Order"), States: []string{"Placed"},
		Branches: []Branch{{Name: "Cancelled", From: []string{"Placed"}}},
		Events:   []*Event{NewEvent("OrderPlaced")},
	}
	want := map[string]string{"OrderStatePlaced": "Placed", "OrderStateCancelled": "Cancelled", "OrderPlaced": "OrderPlaced", "OrderDispatcher": ""}
	for _, d := range e.Decls() {
		if from, ok := want[d.Name]; ok {
			if d.From != from {
				t.Errorf("%s is made from %q, want %q", d.Name, d.From, from)
			}
			delete(want, d.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing from Decls: %v", want)
	}
	if ev := e.Events[0]; ev.Handle != "HandleOrderPlaced" || ev.Publish != "PublishOrderPlaced" || ev.PublishTx != "PublishOrderPlacedTx" {
		t.Errorf("event method names %s, %s, %s", ev.Handle, ev.Publish, ev.PublishTx)
	}
}
