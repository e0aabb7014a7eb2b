package validate

import (
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
)

// TestEveryLoadedBrokerIsChecked: a broker package schema loads (and
// package ir names) has its names checked here.
func TestEveryLoadedBrokerIsChecked(t *testing.T) {
	names := schema.BrokerNames()
	if len(names) != len(brokerWhat) {
		t.Errorf("the loader takes brokers %v, the validator knows %d", names, len(brokerWhat))
	}
	for _, b := range names {
		if _, ok := brokerWhat[b]; !ok {
			t.Errorf("broker %s is loaded but its names are not checked", b)
		}
	}
}
