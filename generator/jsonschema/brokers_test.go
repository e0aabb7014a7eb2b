package jsonschema

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
)

// generatorAccepts reports whether ordergen check accepts src.
func generatorAccepts(src []byte) bool {
	f, diags := schema.Load(src)
	if f == nil || diags.Len() > 0 {
		return false
	}
	pkg, _ := validate.Check(f, nil)
	return pkg != nil
}

// TestBrokersAreTheLoaders checks that an entity's brokers: takes, in the
// JSON Schema, the brokers that package schema loads.
func TestBrokersAreTheLoaders(t *testing.T) {
	var got []string
	for k := range at(t, parsed(t), "$defs/entity/properties/brokers/properties") {
		got = append(got, k)
	}
	want := schema.BrokerNames()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("brokers: in the JSON Schema takes %v, the loader %v", got, want)
	}
}

// TestBrokerMistakesFail gives brokers: names the JSON Schema must take and
// mistakes it must catch, as an editor would, and checks that ordergen
// check agrees on each.
func TestBrokerMistakesFail(t *testing.T) {
	v := mustChecker(t)
	const entity = "version: 1\npackage: x\nentities:\n  A:\n    key: {field: ID, type: string}\n    events: {Happened: {}}\n    brokers: "
	for _, good := range []string{
		"{kafka: a.b_c-1, rabbitmq: ledger-accounts, pubsub: ledger-accounts, sqs: ledger-accounts.fifo}",
		"{kafka: " + strings.Repeat("t", 249) + ", pubsub: T~%+.1}",
	} {
		if err := v.Check([]byte(entity + good + "\n")); err != nil {
			t.Errorf("brokers: %s fails the JSON Schema: %v", good, err)
		}
		if !generatorAccepts([]byte(entity + good + "\n")) {
			t.Errorf("brokers: %s fails ordergen check", good)
		}
	}
	for _, bad := range []string{
		"{}",
		"[kafka]",
		"{nats: orders}",
		"{kafka: 42}",
		"{kafka: a topic}",
		"{kafka: ..}",
		"{kafka: " + strings.Repeat("t", 250) + "}",
		"{rabbitmq: amq.orders}",
		"{rabbitmq: ''}",
		"{pubsub: goog-orders}",
		"{pubsub: 1orders}",
		"{pubsub: ab}",
		"{sqs: orders}",
		"{sqs: orders!.fifo}",
	} {
		if err := v.Check([]byte(entity + bad + "\n")); err == nil {
			t.Errorf("brokers: %s passes the JSON Schema", bad)
		}
		if generatorAccepts([]byte(entity + bad + "\n")) {
			t.Errorf("brokers: %s passes ordergen check", bad)
		}
	}
}
