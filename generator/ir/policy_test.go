package ir_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/runtime"
)

// PolicyFields pairs each name with its value by hand: each name must be
// the Policy field whose value it carries (and a runtime.Config field of
// the same type), or the generated Config would set one policy from
// another.
func TestPolicyFieldsNameTheirValues(t *testing.T) {
	p := ir.Policy{ // every field distinct, so that a mix-up shows
		MaxActive:   3,
		Backlog:     runtime.Backlog{PerKey: 5, Total: 7, WhenFull: runtime.Block},
		Retry:       runtime.Retry{Attempts: 11},
		Timeout:     13 * time.Second,
		OnExhausted: runtime.SendToDeadLetter,
		MaxHeld:     17,
		MaxHold:     19 * time.Second,
		BatchSize:   23,
		Linger:      29 * time.Millisecond,
	}
	e := &ir.Entity{Policy: p, Version: &ir.Field{}, Batch: true}
	config := reflect.TypeFor[runtime.Config[string, struct{}]]()
	fields := e.PolicyFields()
	// Group is the one field of ir.Policy that is no runtime.Config field:
	// it sets a groupcommit.Config.
	if n := reflect.TypeFor[ir.Policy]().NumField() - 1; len(fields) != n {
		t.Fatalf("%d policy fields for the %d runtime.Config fields of ir.Policy", len(fields), n)
	}
	for _, f := range fields {
		own := reflect.ValueOf(p).FieldByName(f.Name)
		if !own.IsValid() || !reflect.DeepEqual(own.Interface(), f.Value) {
			t.Errorf("policy field %s carries %v, the Policy's %s is %v", f.Name, f.Value, f.Name, own)
		}
		if cf, ok := config.FieldByName(f.Name); !ok || cf.Type != reflect.TypeOf(f.Value) {
			t.Errorf("policy field %s (%T) is not a runtime.Config field of its type", f.Name, f.Value)
		}
	}
}
