package validate

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// A broker's name is checked against what the broker takes, so that a
// name the schema gives can be created and published to as written.
var (
	// kafkaTopic: Kafka's legal topic characters and length (and not . or
	// .., which it refuses).
	kafkaTopic = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)
	// pubsubTopic: a Pub/Sub topic ID (not goog..., checked apart).
	pubsubTopic = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._~+%-]{2,254}$`)
	// sqsFIFO: an SQS FIFO queue's name, 80 characters at most.
	sqsFIFO = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}\.fifo$`)
	sqsName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
)

// maxTopology is the longest runtime/rabbitmq Topology name: its queues
// add ".0" to ".4095" (Topology's queue limit), and AMQP names are 255
// bytes at most.
const maxTopology = 255 - len(".4095")

// brokerWhat says what a broker's name in brokers: names.
var brokerWhat = map[string]string{
	ir.BrokerKafka:    "kafka topic",
	ir.BrokerRabbitMQ: "rabbitmq topology name",
	ir.BrokerPubSub:   "pubsub topic",
	ir.BrokerSQS:      "sqs queue",
}

// brokers checks e's brokers: and sets out.Brokers to the valid ones.
func (v *validator) brokers(e *schema.Entity, out *ir.Entity) {
	for _, b := range e.Brokers {
		kind, a := b.Broker.Value, b.Address
		if a == nil {
			continue
		}
		what := brokerWhat[kind]
		if a.Tag != "!!str" || a.Value == "" {
			v.errs.Add(a.Pos, "the %s of entity %s must be text, not %q: write %s: \"NAME\"", what, e.Name.Value, a.Value, kind)
			continue
		}
		if msg := brokerProblem(kind, a.Value); msg != "" {
			v.errs.Add(a.Pos, "%s %q of entity %s: %s", what, a.Value, e.Name.Value, msg)
			continue
		}
		out.Brokers = append(out.Brokers, ir.Broker{Kind: kind, Address: a.Value})
	}
}

// brokerProblem says what is wrong with name as kind's name, or "".
func brokerProblem(kind, name string) string {
	switch kind {
	case ir.BrokerKafka:
		if !kafkaTopic.MatchString(name) || name == "." || name == ".." {
			return "a Kafka topic is 1 to 249 letters, digits, ., _ and - (and not . or ..)"
		}
	case ir.BrokerRabbitMQ:
		switch {
		case !utf8.ValidString(name) || len(name) > maxTopology:
			return "the name of a runtime/rabbitmq Topology (its exchange; its queues add .0, .1, ...) is at most 250 bytes of UTF-8"
		case strings.HasPrefix(name, "amq."):
			return "names starting with amq. are reserved by RabbitMQ"
		}
	case ir.BrokerPubSub:
		switch {
		case !pubsubTopic.MatchString(name):
			return "a Pub/Sub topic ID starts with a letter and is 3 to 255 letters, digits, -, _, ., ~, + and %"
		case strings.HasPrefix(strings.ToLower(name), "goog"):
			return "Pub/Sub topic IDs starting with goog are reserved by Google"
		}
	case ir.BrokerSQS:
		switch {
		case sqsFIFO.MatchString(name):
		case sqsName.MatchString(name) && !strings.HasSuffix(name, ".fifo"):
			return "ordergen orders a key's events by message group, which only FIFO queues have: a FIFO queue's name ends in .fifo"
		default:
			return "an SQS FIFO queue's name is 1 to 75 letters, digits, - and _, then .fifo"
		}
	}
	return ""
}

// brokerClashes reports a name that two entities give on one broker, at
// the later one: a consumer decodes one entity's events, so the other's
// would fail to decode there.
func (v *validator) brokerClashes(f *schema.File) {
	type first struct {
		entity string
		pos    diag.Pos
	}
	seen := make(map[[2]string]first)
	for _, e := range f.Entities {
		for _, b := range e.Brokers {
			a := b.Address
			if a == nil || a.Tag != "!!str" || brokerProblem(b.Broker.Value, a.Value) != "" {
				continue
			}
			k := [2]string{b.Broker.Value, a.Value}
			if prev, ok := seen[k]; ok {
				v.errs.Add(a.Pos, "%s %q is also entity %s's (line %d): each entity's events need their own, since a consumer decodes one entity's events", brokerWhat[k[0]], a.Value, prev.entity, prev.pos.Line)
				continue
			}
			seen[k] = first{e.Name.Value, a.Pos}
		}
	}
}
