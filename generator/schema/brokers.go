package schema

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/diag"
)

// brokerNames are the keys of an entity's brokers:, named after the
// runtime's transport packages, in the order messages list them.
var brokerNames = []string{"kafka", "rabbitmq", "pubsub", "sqs"}

// BrokerNames returns the brokers an entity's brokers: may name.
func BrokerNames() []string { return slices.Clone(brokerNames) }

// BrokerDecl is one entry of an entity's brokers:, a broker that carries
// its events and the name of what they travel through there: a topic
// (kafka, pubsub), a topology's exchange (rabbitmq) or a FIFO queue (sqs).
type BrokerDecl struct {
	// Broker is the broker's name, the mapping key.
	Broker Scalar
	// Address is the name there, nil when it is not a single value
	// (already reported).
	Address *Scalar
}

// brokers loads an entity's brokers:, a mapping of broker names to names
// there; where names the entity in messages.
func (l *loader) brokers(n *yaml.Node, where string) []BrokerDecl {
	what := "brokers of " + where
	// A broker ordergen has no transport for gets the list; a misspelt one
	// the usual "did you mean".
	explain := func(key string) string {
		if diag.Closest(key, brokerNames) != "" {
			return ""
		}
		return fmt.Sprintf("unknown broker %q in %s: ordergen's transports are kafka, rabbitmq, pubsub and sqs", key, what)
	}
	entries, _ := l.keyed(n, what, false, explain, brokerNames...)
	if isMapping(n) && len(n.Content) == 0 {
		l.diags.Add(pos(n), "%s names no broker: write brokers: {kafka: TOPIC}, or leave brokers out", what)
	}
	out := make([]BrokerDecl, 0, len(entries))
	for _, e := range entries {
		out = append(out, BrokerDecl{Broker: name(e.key), Address: l.scalar(e.val, "the "+e.key.Value+" name in "+what)})
	}
	return out
}
