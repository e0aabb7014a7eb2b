package asyncapi

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/ir"
)

// channel is one channel of an entity: on one of its brokers, or, when
// the schema names none, the entity's events wherever they travel.
type channel struct {
	id     string
	broker *ir.Broker
}

// channelsOf returns e's channels: one per broker, in the schema's order,
// named Entity.broker; or one named Entity, without an address.
func channelsOf(e *ir.Entity) []channel {
	if len(e.Brokers) == 0 {
		return []channel{{id: e.Name}}
	}
	out := make([]channel, len(e.Brokers))
	for i := range e.Brokers {
		out[i] = channel{id: e.Name + "." + e.Brokers[i].Kind, broker: &e.Brokers[i]}
	}
	return out
}

// node is the Channel Object of c.
func (c channel) node(e *ir.Entity) *yaml.Node {
	messages := newMapping()
	for _, ev := range e.Events {
		messages.set(ev.Name, ref("#/components/messages/"+ev.Name))
	}
	m := newMapping()
	if c.broker == nil {
		desc := "The schema names no broker for " + e.Name + ": its events travel in process (" + e.Names.Dispatcher +
			") or through a transport set up in code."
		return m.set("address", null()).
			text("title", e.Name).
			text("description", paragraphs(e.Doc, desc)).
			set("messages", messages.n).
			node()
	}
	b := *c.broker
	address := b.Address
	if b.Kind == ir.BrokerRabbitMQ {
		// The channel is the routing key, the key's text, on the
		// topology's exchange.
		address = "{" + e.Key.Name + "}"
	}
	m.text("address", address)
	m.text("title", e.Name+" on "+brokerTitle[b.Kind]).
		text("description", paragraphs(e.Doc, ordering(e, b))).
		set("servers", list(false, ref("#/servers/"+b.Kind))).
		set("messages", messages.n)
	switch b.Kind {
	case ir.BrokerRabbitMQ:
		m.set("parameters", newMapping().set(e.Key.Name, newMapping().
			text("description", "The routing key: the event's key, "+keyText(e)+".").
			text("location", keyLocation(e)).n).n)
		m.set("bindings", newMapping().set("amqp", newMapping().
			text("is", "routingKey").
			set("exchange", newMapping().text("name", b.Address).set("durable", boolean(true)).set("autoDelete", boolean(false)).n).
			text("bindingVersion", amqpBinding).n).n)
	case ir.BrokerSQS:
		// SQS's binding has no message group: an extension names it.
		m.set("bindings", newMapping().set("sqs", newMapping().
			set("queue", newMapping().text("name", b.Address).set("fifoQueue", boolean(true)).n).
			text("x-ordergen-message-group-id", keyLocation(e)).
			text("bindingVersion", sqsBinding).n).n)
	}
	return m.node()
}

// ordering says how broker b keeps a key's events of e in order.
func ordering(e *ir.Entity, b ir.Broker) string {
	key := "the event's " + e.Key.Name
	if e.Key.Type.Name != "string" {
		key += " in decimal"
	}
	switch b.Kind {
	case ir.BrokerKafka:
		return "Each record's key is " + key + ", so a key's records share a partition and keep their order; the " +
			headerType + " header names the event."
	case ir.BrokerRabbitMQ:
		return "Published to the x-consistent-hash exchange " + b.Address + " with " + key + " as the routing key, so a key's " +
			"messages share one of the queues " + b.Address + ".0, " + b.Address + ".1, ..., each consumed by a single active " +
			"consumer; the message's type property names the event and its " + headerKey + " header carries the key. " +
			"(With runtime/rabbitmq's PublisherHash routing, the publisher picks the queue itself and publishes through the default exchange.)"
	case ir.BrokerPubSub:
		return "Each message's ordering key is " + key + " (past 1024 bytes, sha256: and its hex digest), so a subscription " +
			"with message ordering delivers a key's events in order; the " + headerType + " attribute names the event."
	case ir.BrokerSQS:
		return "A FIFO queue: each message's group ID is " + key + " (sha256: and its hex digest where SQS does not take it), " +
			"so a key's events are delivered in order, one at a time; the " + headerType + " message attribute names the event."
	}
	return ""
}

// operation is the Operation Object of c for action, send or receive:
// the generated code does both.
func (c channel) operation(e *ir.Entity, action string) *yaml.Node {
	var messages []*yaml.Node
	for _, ev := range e.Events {
		messages = append(messages, ref("#/channels/"+c.id+"/messages/"+ev.Name))
	}
	n := e.Names
	var title, summary, where, pkg string
	if c.broker != nil {
		where, pkg = " on "+brokerTitle[c.broker.Kind], "runtime/"+c.broker.Kind
	}
	switch {
	case action == "send" && c.broker == nil:
		title, summary = "Publish "+e.Name+" events", n.Dispatcher+"'s Publish methods (in process), or "+n.Producer+" over a transport."
	case action == "send":
		title, summary = "Publish "+e.Name+" events"+where, n.Producer+" over "+pkg+"'s Producer, or "+n.Outbox+", whose relay (runtime/outbox) sends through that Producer."
	case c.broker == nil:
		title, summary = "Handle "+e.Name+" events", n.Dispatcher+" hands each key's events, in order, to the handler of each subscriber."
	default:
		title, summary = "Handle "+e.Name+" events"+where, pkg+"'s Consumer feeds "+n.Dispatcher+", which hands each key's events, in order, to the handler of each subscriber."
	}
	m := newMapping().
		text("action", action).
		set("channel", ref("#/channels/"+c.id)).
		text("title", title).
		text("summary", summary).
		set("messages", list(false, messages...))
	if c.broker != nil && c.broker.Kind == ir.BrokerRabbitMQ {
		// runtime/rabbitmq publishes mandatory, persistent, confirmed
		// messages, and acknowledges each once it is finished.
		if action == "send" {
			m.set("bindings", newMapping().set("amqp", newMapping().set("deliveryMode", integer(2)).set("mandatory", boolean(true)).text("bindingVersion", amqpBinding).n).n)
		} else {
			m.set("bindings", newMapping().set("amqp", newMapping().set("ack", boolean(true)).text("bindingVersion", amqpBinding).n).n)
		}
	}
	return m.node()
}

// paragraphs joins the non-empty texts with blank lines.
func paragraphs(texts ...string) string {
	var out []string
	for _, t := range texts {
		if t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n\n")
}
