package main

import (
	"context"
	"fmt"
	"io"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transport"
)

const queues = 4

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, url string, cfg brokerdemo.Config) error {
	start := time.Now()
	conn, err := amqp.Dial(url)
	if err != nil {
		return fmt.Errorf("dial %s: %w", url, err)
	}
	defer func() { _ = conn.Close() }()
	topo := rabbitmq.Topology{Name: fmt.Sprintf("ledger-example-%d", time.Now().UnixNano()), Queues: queues, Transient: true}
	admin, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := topo.Declare(admin); err != nil {
		return err
	}
	defer func() { _ = topo.Delete(admin) }()

	accounts := brokerdemo.Stream(cfg.Seed, 0x7261626269, cfg.Accounts, cfg.Events)
	total := cfg.Accounts * cfg.Events
	sh := brokerdemo.NewShared(total, cfg.Slow)
	b, versions := sh.Book, sh.Versions

	// a subscribes first: it is every queue's single active consumer, and
	// b stands by.
	a, err := startProcess(url, topo, "a", sh)
	if err != nil {
		return err
	}
	if err := a.Await(ctx, "subscribe to every queue", func(c *rabbitmq.Consumer[string, ledger.AccountEvent]) bool {
		return c.Stats().Subscribed >= topo.Queues
	}); err != nil {
		a.Kill()
		return err
	}
	c, err := startProcess(url, topo, "b", sh)
	if err != nil {
		a.Kill()
		return err
	}
	if err := c.Await(ctx, "subscribe to every queue", func(c *rabbitmq.Consumer[string, ledger.AccountEvent]) bool {
		return c.Stats().Subscribed >= topo.Queues
	}); err != nil {
		a.Kill()
		c.Kill()
		return err
	}

	sink, err := rabbitmq.NewProducer[string, ledger.AccountEvent](rabbitmq.ProducerConfig[ledger.AccountEvent]{URL: url, Topology: topo, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}
	defer func() { _ = sink.Close(context.Background()) }()
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}

	// A message that does not decode: rejected to the dead-letter queue, and
	// its queue goes on.
	bad := amqp.Publishing{Headers: amqp.Table{transport.HeaderKey: "acct-000"}, Type: "Deposited", Body: []byte("{not json")}
	if err := admin.PublishWithContext(ctx, topo.Name, "acct-000", false, false, bad); err != nil {
		return err
	}
	k, err := brokerdemo.KillMidStream(ctx, sh, producer, accounts, a, c, func(c *rabbitmq.Consumer[string, ledger.AccountEvent]) int { return c.Stats().InFlight })
	if err != nil {
		return err
	}
	dead, err := deadLetters(admin, topo)
	if err != nil {
		return err
	}

	tally := brokerdemo.Check(ctx, b, versions, accounts, cfg.Events)
	as, cs := a.Consumer.Stats(), c.Consumer.Stats()
	skipped := brokerdemo.Skipped(a, c)
	fmt.Fprintln(out, "ordergen rabbitmq example: the ledger schema across two consumer processes (RabbitMQ, single active consumer)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, published by AccountProducer (publisher confirms) to the consistent-hash exchange %s over %d queues\n", cfg.Accounts, total, topo.Name, queues)
	fmt.Fprintf(out, "consumers  a active on every queue, b standing by; 64 keys in progress each, prefetch 64 per queue, acks as messages finish\n")
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d messages unacknowledged, %d accepted events abandoned\n", k.Applied, total, k.Unsettled, k.Abandoned)
	fmt.Fprintf(out, "failover   the broker returned a's unacknowledged messages, in order, and made b active:\n")
	fmt.Fprintf(out, "           %d re-delivered events (finished by a, acknowledgement lost with it) skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d; b delivered %d messages, acknowledged them in %d frames\n", tally.By["a"], tally.By["b"], cs.Received, cs.Acked)
	fmt.Fprintf(out, "dead letter %d undecodable message rejected to %s (rejected by a %d, b %d); its queue kept flowing\n", dead, topo.DeadLetterQueue(), as.Rejected, cs.Rejected)
	return brokerdemo.Report(out, tally, total, dead == 1, start)
}

// deadLetters counts the messages in the dead-letter queue.
func deadLetters(ch *amqp.Channel, topo rabbitmq.Topology) (int, error) {
	q, err := ch.QueueDeclarePassive(topo.DeadLetterQueue(), !topo.Transient, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("inspect %s: %w", topo.DeadLetterQueue(), err)
	}
	return q.Messages, nil
}
