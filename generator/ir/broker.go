package ir

// Broker is a broker that carries an entity's events between processes,
// as the schema's brokers: names it, and the name of what the events
// travel through there. The generated code does not read it (a transport
// is configured in code); it describes where the events are, for ordergen
// asyncapi and for ordergen breaking.
type Broker struct {
	// Kind is the broker: BrokerKafka, BrokerRabbitMQ, BrokerPubSub or
	// BrokerSQS.
	Kind string
	// Address is the entity's topic (Kafka, Pub/Sub: the topic's ID in
	// its project), the Name of its runtime/rabbitmq Topology (whose
	// consistent-hash exchange it names), or its FIFO queue (SQS).
	Address string
}

// The brokers of Broker.Kind: the keys of brokers: in a schema, named
// after the runtime's transport packages.
const (
	BrokerKafka    = "kafka"
	BrokerRabbitMQ = "rabbitmq"
	BrokerPubSub   = "pubsub"
	BrokerSQS      = "sqs"
)

// Broker returns e's broker of kind, and whether the schema names it.
func (e *Entity) Broker(kind string) (Broker, bool) {
	for _, b := range e.Brokers {
		if b.Kind == kind {
			return b, true
		}
	}
	return Broker{}, false
}
