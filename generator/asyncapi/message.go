package asyncapi

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordergen/ordergen/generator/ir"
)

// Header names: the event's type travels beside its payload, as a Kafka
// record header, a Pub/Sub or SQS message attribute (RabbitMQ: the
// message's type property); RabbitMQ carries the key in a header. They are
// the runtime's (runtime/kafka.HeaderType, runtime/rabbitmq.HeaderKey, ...).
const (
	headerType = "ordergen-type"
	headerKey  = "ordergen-key"
)

// message is the Message Object of ev: its payload, the headers the
// entity's brokers add, its key's place in their bindings, and what it
// does to its entity.
func message(e *ir.Entity, ev *ir.Event) *yaml.Node {
	return newMapping().
		text("name", ev.Name).
		text("title", ev.Name).
		text("summary", summary(e, ev)).
		text("description", ev.Doc).
		set("headers", headers(e, ev)).
		set("payload", ref("#/components/schemas/"+ev.Name)).
		set("bindings", messageBindings(e, ev)).
		node()
}

// summary says in a sentence or two what ev does to its entity.
func summary(e *ir.Entity, ev *ir.Event) string {
	var s []string
	switch {
	case e.Notification:
		s = append(s, "Says that the "+e.Name+" of its "+e.Key.Name+" changed: it carries only the key, and a key's pending notifications are coalesced into one call.")
	case e.Version != nil && ev.Snapshot:
		s = append(s, "A snapshot of the "+e.Name+" (its full state): applied across a version gap.")
	case e.Version != nil:
		s = append(s, "A change to the "+e.Name+": on a version gap it waits for the missing events.")
	default:
		s = append(s, "An event of the "+e.Name+", handled in order with its key's others.")
	}
	if e.Conflate && !e.Notification {
		s = append(s, "Conflated: a newer pending event of its key replaces it.")
	}
	if ev.To != "" {
		to := "Moves the " + e.Name + " to " + ev.To + " (states only move forward: a late move is skipped)."
		if b, ok := e.IsBranch(ev.To); ok {
			to = "Moves the " + e.Name + " to " + ev.To + ", a branch state entered only from " + strings.Join(b.From, " or ") + "."
		}
		s = append(s, to)
	}
	if len(ev.In) > 0 {
		s = append(s, "Happens within "+strings.Join(ev.In, " or ")+" without moving the "+e.Name+": skipped in any other state.")
	}
	return strings.Join(s, " ")
}

// headers is the schema of the headers the entity's brokers add, nil
// without brokers.
func headers(e *ir.Entity, ev *ir.Event) *yaml.Node {
	var typed []string
	for _, b := range e.Brokers {
		switch b.Kind {
		case ir.BrokerKafka:
			typed = append(typed, "a Kafka record header")
		case ir.BrokerPubSub:
			typed = append(typed, "a Pub/Sub message attribute")
		case ir.BrokerSQS:
			typed = append(typed, "an SQS message attribute")
		}
	}
	props := newMapping()
	if len(typed) > 0 {
		desc := "Names the event: " + strings.Join(typed, ", ")
		if _, ok := e.Broker(ir.BrokerRabbitMQ); ok {
			desc += " (on RabbitMQ, the message's type property)"
		}
		props.set(headerType, newMapping().text("type", "string").text("const", ev.Name).text("description", desc+".").n)
	}
	if _, ok := e.Broker(ir.BrokerRabbitMQ); ok {
		props.set(headerKey, keySchema(e).text("description", "On RabbitMQ: the message's key, "+keyText(e)+".").n)
	}
	if props.empty() {
		return nil
	}
	return newMapping().text("type", "object").set("properties", props.n).node()
}

// payload is the JSON Schema of ev's encoding: the key, the version, then
// the event's fields, each under its wire name, all always present.
func payload(e *ir.Entity, ev *ir.Event) *yaml.Node {
	props := newMapping()
	var required []string
	add := func(f ir.Field, s mapping) {
		props.set(f.Wire, s.n)
		required = append(required, f.Wire)
	}
	key := typeSchema(e.Key.Type)
	if e.Key.Type.Name == "string" {
		key.set("minLength", integer(1)) // the publishers refuse an empty key
	}
	keyDesc := "The key: every event of the " + e.Name + " it names carries it, and they are handled in order."
	if e.Notification {
		keyDesc = "The key: the " + e.Name + " that changed."
	}
	add(e.Key, key.text("description", keyDesc))
	if v := e.Version; v != nil {
		add(*v, versionSchema(v.Type).text("description", "The "+e.Name+"'s version, numbered by its single writer: one more than the key's previous event's."))
	}
	for _, f := range ev.Fields {
		add(f, typeSchema(f.Type).text("description", f.Doc))
	}
	return newMapping().
		text("type", "object").
		set("properties", props.n).
		set("required", strs(required...)).
		node()
}

// versionSchema is the version's schema: an integer from 1 (the
// publishers refuse a version below 1).
func versionSchema(t *ir.Type) mapping {
	s := typeSchema(t)
	c := s.n.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == "minimum" {
			c[i+1] = integer(1)
			return s
		}
	}
	// Keep the spec's order: type, then minimum.
	m := newMapping().set("type", c[1]).set("minimum", integer(1))
	for i := 2; i+1 < len(c); i += 2 {
		m.set(c[i].Value, c[i+1])
	}
	return m
}

// keySchema is the schema of the key as the brokers carry it, as text:
// durable.EncodeKey's, a string as it is, an integer in decimal.
func keySchema(e *ir.Entity) mapping {
	m := newMapping().text("type", "string")
	switch {
	case e.Key.Type.Name == "string":
		return m.set("minLength", integer(1))
	case isUnsigned(e.Key.Type.Name):
		return m.text("pattern", "^[0-9]+$")
	}
	return m.text("pattern", "^-?[0-9]+$")
}

// keyText says how the brokers write e's key.
func keyText(e *ir.Entity) string {
	if e.Key.Type.Name == "string" {
		return "its " + e.Key.Name
	}
	return "its " + e.Key.Name + " in decimal"
}

// keyLocation is the runtime expression of the key in the payload.
func keyLocation(e *ir.Entity) string {
	return "$message.payload#/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(e.Key.Wire)
}
