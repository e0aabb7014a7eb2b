package rabbitmq

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
)

// Routing says who spreads keys over a Topology's queues.
type Routing uint8

const (
	// ConsistentHash: the producer publishes to the topology's exchange of
	// type x-consistent-hash (the rabbitmq_consistent_hash_exchange
	// plugin, shipped with RabbitMQ) with the key as routing key; the
	// exchange picks the queue. Other publishers (in any language) reach
	// the same queue for a key by publishing to the exchange the same way.
	ConsistentHash Routing = iota
	// PublisherHash: the producer picks the queue itself, QueueOf(key)
	// (jump consistent hash of the key's FNV-1a 64 hash), and publishes to
	// it through the default exchange. No plugin is needed; other
	// publishers must compute the same hash.
	PublisherHash
)

var routingNames = [...]string{ConsistentHash: "consistent-hash", PublisherHash: "publisher-hash"}

// String returns the routing's name.
func (r Routing) String() string {
	if int(r) < len(routingNames) {
		return routingNames[r]
	}
	return fmt.Sprintf("Routing(%d)", r)
}

// Topology names what a producer publishes to and a consumer consumes
// from: Queues queues, Name.0 to Name.<Queues-1>, each with a single
// active consumer (x-single-active-consumer) and a dead-letter exchange;
// the exchange Name (x-consistent-hash) bound to every queue when the
// routing is ConsistentHash; and the dead-letter exchange Name.dlx
// (fanout) with its queue Name.dlq, where bad messages go.
//
// Declare creates it (idempotently); producers and consumers declare it
// before they use it. Changing Queues remaps keys: a key's messages
// published after the change may go to another queue than those before
// it and be consumed before them. Stop the producers and let the consumers
// drain every queue before changing it.
type Topology struct {
	// Name prefixes every name of the topology. Required.
	Name string
	// Queues is the number of queues the keys are spread over: the units
	// of order, each consumed by one consumer at a time. Zero: 1.
	Queues int
	// Routing says who spreads keys over the queues. Zero:
	// ConsistentHash.
	Routing Routing
	// Transient declares transient queues and exchanges and publishes
	// transient messages, which a broker restart loses: for tests. Zero
	// (false): durable ones and persistent messages.
	Transient bool
	// QueueArgs are extra arguments for declaring the queues
	// (x-queue-type, x-max-length, ...). The topology's own
	// (x-single-active-consumer, x-dead-letter-exchange) cannot be
	// overridden.
	QueueArgs amqp.Table
}

// withDefaults returns t with its zero fields set, or an error wrapping
// runtime.ErrInvalidConfig.
func (t Topology) withDefaults() (Topology, error) {
	if t.Queues == 0 {
		t.Queues = 1
	}
	switch {
	case t.Name == "":
		return t, fmt.Errorf("rabbitmq: %w: the topology has no Name", runtime.ErrInvalidConfig)
	case t.Queues < 0 || t.Queues > maxQueues:
		return t, fmt.Errorf("rabbitmq: %w: Queues %d is not within 1..%d", runtime.ErrInvalidConfig, t.Queues, maxQueues)
	case t.Routing > PublisherHash:
		return t, fmt.Errorf("rabbitmq: %w: unknown routing %v", runtime.ErrInvalidConfig, t.Routing)
	case strings.HasPrefix(t.Name, "amq."):
		return t, fmt.Errorf("rabbitmq: %w: names starting with amq. are reserved by the broker", runtime.ErrInvalidConfig)
	}
	for k := range t.QueueArgs {
		if k == argSingleActive || k == argDeadLetter {
			return t, fmt.Errorf("rabbitmq: %w: QueueArgs may not set %s: the topology sets it", runtime.ErrInvalidConfig, k)
		}
	}
	return t, nil
}

// maxQueues bounds Topology.Queues.
const maxQueues = 4096

const (
	argSingleActive = "x-single-active-consumer"
	argDeadLetter   = "x-dead-letter-exchange"
)

// Queue returns the name of queue i.
func (t Topology) Queue(i int) string { return fmt.Sprintf("%s.%d", t.Name, i) }

// DeadLetterExchange returns the name of the dead-letter exchange.
func (t Topology) DeadLetterExchange() string { return t.Name + ".dlx" }

// DeadLetterQueue returns the name of the queue bound to the dead-letter
// exchange.
func (t Topology) DeadLetterQueue() string { return t.Name + ".dlq" }

// QueueOf returns the queue PublisherHash routing gives key (its text
// form, durable.EncodeKey): Lamping and Veach's jump consistent hash of
// the key's 64-bit FNV-1a hash over Queues buckets. Growing Queues from n
// to n+1 moves about one key in n+1, but every moved key still changes
// queue: see Topology on remapping.
func (t Topology) QueueOf(key string) int {
	n := max(t.Queues, 1)
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return jump(h.Sum64(), n)
}

// jump is the jump consistent hash (Lamping, Veach 2014).
func jump(key uint64, buckets int) int {
	var b, j int64 = -1, 0
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// Declare declares the topology on ch: the dead-letter exchange and
// queue, the queues, and for ConsistentHash the exchange and its bindings
// (weight 1 each). Declaring what exists with the same arguments changes
// nothing; different arguments make the broker close ch with
// PRECONDITION_FAILED, which Declare returns.
func (t Topology) Declare(ch *amqp.Channel) error {
	t, err := t.withDefaults()
	if err != nil {
		return err
	}
	if ch == nil {
		return fmt.Errorf("rabbitmq: %w: nil channel", runtime.ErrInvalidConfig)
	}
	queues := make([]int, t.Queues)
	for i := range queues {
		queues[i] = i
	}
	return t.declare(ch, queues)
}

// declare declares the dead-letter exchange and queue, the exchange, and
// the queues listed.
func (t Topology) declare(ch *amqp.Channel, queues []int) error {
	dlx := t.DeadLetterExchange()
	if err := ch.ExchangeDeclare(dlx, amqp.ExchangeFanout, !t.Transient, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq: declare exchange %s: %w", dlx, err)
	}
	if _, err := ch.QueueDeclare(t.DeadLetterQueue(), !t.Transient, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq: declare queue %s: %w", t.DeadLetterQueue(), err)
	}
	if err := ch.QueueBind(t.DeadLetterQueue(), "", dlx, false, nil); err != nil {
		return fmt.Errorf("rabbitmq: bind queue %s: %w", t.DeadLetterQueue(), err)
	}
	if t.Routing == ConsistentHash {
		if err := ch.ExchangeDeclare(t.Name, "x-consistent-hash", !t.Transient, false, false, false, nil); err != nil {
			var ae *amqp.Error
			if errors.As(err, &ae) && ae.Code == amqp.CommandInvalid {
				return fmt.Errorf("rabbitmq: declare exchange %s: %w (is the rabbitmq_consistent_hash_exchange plugin enabled? or use PublisherHash)", t.Name, err)
			}
			return fmt.Errorf("rabbitmq: declare exchange %s: %w", t.Name, err)
		}
	}
	args := amqp.Table{}
	for k, v := range t.QueueArgs {
		args[k] = v
	}
	args[argSingleActive] = true
	args[argDeadLetter] = dlx
	for _, i := range queues {
		q := t.Queue(i)
		if _, err := ch.QueueDeclare(q, !t.Transient, false, false, false, args); err != nil {
			return fmt.Errorf("rabbitmq: declare queue %s: %w", q, err)
		}
		if t.Routing == ConsistentHash {
			if err := ch.QueueBind(q, "1", t.Name, false, nil); err != nil {
				return fmt.Errorf("rabbitmq: bind queue %s to %s: %w", q, t.Name, err)
			}
		}
	}
	return nil
}

// Delete deletes what Declare declared (tests and tear-downs), with the
// messages in its queues.
func (t Topology) Delete(ch *amqp.Channel) error {
	t, err := t.withDefaults()
	if err != nil {
		return err
	}
	var errs []error
	for i := range t.Queues {
		if _, err := ch.QueueDelete(t.Queue(i), false, false, false); err != nil {
			errs = append(errs, err)
		}
	}
	if t.Routing == ConsistentHash {
		if err := ch.ExchangeDelete(t.Name, false, false); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := ch.QueueDelete(t.DeadLetterQueue(), false, false, false); err != nil {
		errs = append(errs, err)
	}
	if err := ch.ExchangeDelete(t.DeadLetterExchange(), false, false); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("rabbitmq: delete topology %s: %w", t.Name, errors.Join(errs...))
	}
	return nil
}

// route returns the exchange and routing key that a message of key is
// published with.
func (t Topology) route(key string) (exchange, routingKey string) {
	if t.Routing == PublisherHash {
		return "", t.Queue(t.QueueOf(key))
	}
	return t.Name, key
}
