package asyncapi

import (
	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/ir"
)

// Binding versions: the newest of each binding that AsyncAPI 3.0.0's JSON
// Schema (@asyncapi/specs) accepts.
const (
	kafkaBinding  = "0.5.0"
	amqpBinding   = "0.3.0"
	pubsubBinding = "0.2.0"
	sqsBinding    = "0.2.0"
)

// brokerOrder is the order of the servers, whatever the entities' order.
var brokerOrder = []string{ir.BrokerKafka, ir.BrokerRabbitMQ, ir.BrokerPubSub, ir.BrokerSQS}

// brokerTitle is how the text names each broker.
var brokerTitle = map[string]string{
	ir.BrokerKafka:    "Kafka",
	ir.BrokerRabbitMQ: "RabbitMQ",
	ir.BrokerPubSub:   "Pub/Sub",
	ir.BrokerSQS:      "SQS",
}

// servers has one server per broker that an entity names, nil for none.
// Their addresses are the services' configuration, not the schema's: the
// host is a variable where the broker has no fixed one.
func servers(pkg *ir.Package) *yaml.Node {
	used := make(map[string]bool)
	for _, e := range pkg.Entities {
		for _, b := range e.Brokers {
			used[b.Kind] = true
		}
	}
	m := newMapping()
	for _, kind := range brokerOrder {
		if used[kind] {
			m.set(kind, server(kind))
		}
	}
	return m.node()
}

func server(kind string) *yaml.Node {
	variable := func(name, desc string) *yaml.Node {
		return newMapping().set(name, newMapping().text("description", desc).n).node()
	}
	s := newMapping()
	switch kind {
	case ir.BrokerKafka:
		s.text("host", "{host}").text("protocol", "kafka").
			text("description", "A Kafka cluster, through runtime/kafka.").
			set("variables", variable("host", "The cluster's bootstrap address, which the service configures."))
	case ir.BrokerRabbitMQ:
		s.text("host", "{host}").text("protocol", "amqp").text("protocolVersion", "0.9.1").
			text("description", "A RabbitMQ broker with the rabbitmq_consistent_hash_exchange plugin, through runtime/rabbitmq.").
			set("variables", variable("host", "The broker's address, which the service configures."))
	case ir.BrokerPubSub:
		s.text("host", "pubsub.googleapis.com").text("protocol", "googlepubsub").
			text("description", "Google Cloud Pub/Sub, through runtime/pubsub.")
	case ir.BrokerSQS:
		s.text("host", "sqs.{region}.amazonaws.com").text("protocol", "sqs").
			text("description", "Amazon SQS, with FIFO queues, through runtime/sqs.").
			set("variables", variable("region", "The AWS region of the queues, which the service configures."))
	}
	return s.node()
}

// messageBindings place the key (and the event's type) in the messages of
// the entity's brokers, nil without brokers. Kafka's record key and
// Pub/Sub's ordering key have fields here; RabbitMQ's routing key and
// SQS's message group are the channels'.
func messageBindings(e *ir.Entity, ev *ir.Event) *yaml.Node {
	m := newMapping()
	for _, kind := range brokerOrder {
		if _, ok := e.Broker(kind); !ok {
			continue
		}
		switch kind {
		case ir.BrokerKafka:
			m.set("kafka", newMapping().
				set("key", keySchema(e).text("description", "The record's key: "+keyText(e)+". A key's records share a partition.").n).
				text("bindingVersion", kafkaBinding).n)
		case ir.BrokerRabbitMQ:
			m.set("amqp", newMapping().text("messageType", ev.Name).text("bindingVersion", amqpBinding).n)
		case ir.BrokerPubSub:
			m.set("googlepubsub", newMapping().
				set("attributes", newMapping().text(headerType, ev.Name).n).
				text("orderingKey", keyLocation(e)).
				text("bindingVersion", pubsubBinding).n)
		}
	}
	return m.node()
}
