package rabbitmq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transport"
)

// A send no queue takes fails with ErrUnroutable (every publish is
// mandatory), the key's later sends fail at once with ErrKeyPaused, other
// keys go on, and after Resume the key's sends go through again once the
// queue is back.
func TestUnroutableSendPausesItsKey(t *testing.T) {
	topo := topology(t, 1)
	topo.Routing = rabbitmq.PublisherHash
	conn := declared(t, topo)
	p := producer(t, topo)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(topo.Queue(0), false, false, false); err != nil {
		t.Fatal(err)
	}
	ctx := within(t, 30*time.Second)
	if err := p.Send(ctx, "a", event{Key: "a", Seq: 1}); !errors.Is(err, rabbitmq.ErrUnroutable) {
		t.Fatalf("send to a deleted queue: %v, want ErrUnroutable", err)
	}
	if err := p.Send(ctx, "a", event{Key: "a", Seq: 2}); !errors.Is(err, transport.ErrKeyPaused) {
		t.Fatalf("next send of the key: %v, want ErrKeyPaused", err)
	}
	if _, ok := p.Paused()["a"]; !ok {
		t.Errorf("Paused %v: want key a", p.Paused())
	}
	if err := topo.Declare(ch); err != nil {
		t.Fatal(err)
	}
	p.Resume("a")
	if err := p.Send(ctx, "a", event{Key: "a", Seq: 1}); err != nil {
		t.Fatalf("send after Resume: %v", err)
	}
	// Asynchronous sends: every one is answered, in order of the calls per
	// key, before Flush returns.
	var got []error
	done := make(chan struct{}, 100)
	for seq := 2; seq <= 101; seq++ {
		p.SendAsync(ctx, "a", event{Key: "a", Seq: seq}, func(err error) {
			got = append(got, err) // one confirm goroutine: no race
			done <- struct{}{}
		})
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("%d answers after Flush, want 100", len(got))
	}
	for i, err := range got {
		if err != nil {
			t.Errorf("async send %d: %v", i, err)
		}
	}
	q, err := ch.QueueDeclarePassive(topo.Queue(0), false, false, false, false, nil)
	if err == nil && q.Messages != 101 {
		t.Errorf("the queue holds %d messages, want 101", q.Messages)
	}
}

// A closed producer refuses sends with runtime.ErrClosed; a producer whose
// connection closed fails them with the channel's error.
func TestProducerClosed(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	conn := dial(t)
	p, err := rabbitmq.NewProducer[string, event](rabbitmq.ProducerConfig[event]{Conn: conn, Topology: topo, Codec: codec})
	if err != nil {
		t.Fatal(err)
	}
	ctx := within(t, 30*time.Second)
	if err := p.Send(ctx, "a", event{Key: "a", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	if err := p.Send(ctx, "a", event{Key: "a", Seq: 2}); err == nil {
		t.Fatal("a send on a closed connection succeeded")
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, "b", event{Key: "b", Seq: 1}); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("send after Close: %v, want ErrClosed", err)
	}
}

// Configurations that cannot work are refused with ErrInvalidConfig.
func TestConfigErrors(t *testing.T) {
	good := rabbitmq.Config[event]{URL: "amqp://localhost/", Topology: rabbitmq.Topology{Name: "x", Queues: 2}, Codec: codec}
	for name, mutate := range map[string]func(*rabbitmq.Config[event]){
		"no URL":             func(c *rabbitmq.Config[event]) { c.URL = "" },
		"no codec":           func(c *rabbitmq.Config[event]) { c.Codec = nil },
		"no topology name":   func(c *rabbitmq.Config[event]) { c.Topology.Name = "" },
		"reserved name":      func(c *rabbitmq.Config[event]) { c.Topology.Name = "amq.x" },
		"negative queues":    func(c *rabbitmq.Config[event]) { c.Topology.Queues = -1 },
		"queue out of range": func(c *rabbitmq.Config[event]) { c.Queues = []int{2} },
		"queue twice":        func(c *rabbitmq.Config[event]) { c.Queues = []int{1, 1} },
		"no queues":          func(c *rabbitmq.Config[event]) { c.Queues = []int{} },
		"recovery":           func(c *rabbitmq.Config[event]) { c.AMQP.Recovery = &amqp.Recovery{} },
		"prefetch":           func(c *rabbitmq.Config[event]) { c.Prefetch = 70000 },
		"negative drain":     func(c *rabbitmq.Config[event]) { c.DrainTimeout = -1 },
		"overridden SAC":     func(c *rabbitmq.Config[event]) { c.Topology.QueueArgs = amqp.Table{"x-single-active-consumer": false} },
		"unknown routing":    func(c *rabbitmq.Config[event]) { c.Topology.Routing = 9 },
	} {
		cfg := good
		mutate(&cfg)
		if _, err := rabbitmq.NewConsumer[string, event](cfg); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := rabbitmq.NewConsumer[string, event](good); err != nil {
		t.Errorf("good config: %v", err)
	}
	if _, err := rabbitmq.NewConsumer[float64, floatEvent](rabbitmq.Config[floatEvent]{URL: "amqp://x/", Topology: rabbitmq.Topology{Name: "x"}, Codec: floatCodec{}}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("float keys: %v, want ErrInvalidConfig", err)
	}
	if _, err := rabbitmq.NewProducer[string, event](rabbitmq.ProducerConfig[event]{Topology: good.Topology, Codec: codec}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("producer without connection: %v, want ErrInvalidConfig", err)
	}
	if _, err := rabbitmq.DeadLetters[string, event](nil, good.Topology, codec); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("dead letters without connection: %v, want ErrInvalidConfig", err)
	}
}

type floatEvent struct{ K float64 }

func (e floatEvent) EventKey() float64 { return e.K }

type floatCodec struct{}

func (floatCodec) Encode(floatEvent) (string, []byte, error) { return "f", nil, nil }
func (floatCodec) Decode(string, []byte) (floatEvent, error) { return floatEvent{}, nil }

// A subscriber the consumer could not settle for is refused before Run
// connects.
func TestRunRefusesDropPolicy(t *testing.T) {
	c, err := rabbitmq.NewConsumer[string, event](rabbitmq.Config[event]{URL: "amqp://127.0.0.1:1/", Topology: rabbitmq.Topology{Name: "x"}, Codec: codec})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.New(func(context.Context, string, event) error { return nil },
		runtime.Config[string, event]{OnOutcome: c.OnOutcome, Backlog: runtime.Backlog{WhenFull: runtime.DropNewest}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close(context.Background()) }()
	err = c.Run(context.Background(), transport.EngineTarget(e))
	if !errors.Is(err, runtime.ErrInvalidConfig) || !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("Run: %v, want ErrInvalidConfig and runtime.ErrInvalidConfig", err)
	}
	if err := c.Run(context.Background(), transport.EngineTarget(e)); !errors.Is(err, transport.ErrRunning) {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
}

// A key's writes after one of its writes failed fail too, until Resume,
// even when the producer's sink let them through before the failure was
// answered: written, they would overtake the failed one when the
// application sends it again. Here the failure is a message the broker
// returned (its queue was deleted); TestConformance's
// ProducerConnectionKilled case meets the same rule on a killed
// connection, where it failed 3 of 15 runs without it.
func TestWriterFailsAKeysLaterWritesUntilResume(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	write, resume, closeIt, err := rabbitmq.NewWriter[string, event](rabbitmq.ProducerConfig[event]{URL: brokerURL(t), Topology: topo, Codec: codec})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIt()
	ctx := within(t, 30*time.Second)
	if err := write(ctx, "a", event{Key: "a", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	ch, err := dial(t).Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(topo.Queue(0), false, false, false); err != nil {
		t.Fatal(err)
	}
	if err := write(ctx, "a", event{Key: "a", Seq: 2}); !errors.Is(err, rabbitmq.ErrUnroutable) {
		t.Fatalf("a write to a deleted queue: %v, want ErrUnroutable", err)
	}
	declared(t, topo)
	if err := write(ctx, "a", event{Key: "a", Seq: 3}); err == nil {
		t.Fatal("a key's write after its failed one was published: it would overtake the failed one")
	}
	if err := write(ctx, "b", event{Key: "b", Seq: 1}); err != nil {
		t.Fatalf("another key's write: %v", err)
	}
	resume("a")
	if err := write(ctx, "a", event{Key: "a", Seq: 2}); err != nil {
		t.Fatalf("the failed write again after Resume: %v", err)
	}
	q, err := ch.QueueDeclarePassive(topo.Queue(0), false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Messages != 2 {
		t.Errorf("the queue holds %d messages, want 2 (b 1 and a 2)", q.Messages)
	}
}

// A key's send that failed while a later send of the key was between its
// first check and its publish stops that later send too: publish checks
// again once it holds a channel. (Found by the clean-clone CI:
// TestConformancePublisherHash/ProducerConnectionKilled applied a key's
// 21 after its 10, the 11 to 20 having failed on a killed connection
// while 21 waited for the publisher's lock.)
func TestWriterChecksAKeysFailuresAgainWhenItPublishes(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	write, closeIt, err := rabbitmq.NewRacingWriter[string, event](rabbitmq.ProducerConfig[event]{URL: brokerURL(t), Topology: topo, Codec: codec},
		func(fail func(string)) { fail("a") })
	if err != nil {
		t.Fatal(err)
	}
	defer closeIt()
	if err := write(within(t, 30*time.Second), "a", event{Key: "a", Seq: 2}); err == nil {
		t.Fatal("a key's write was published after an earlier send of the key failed: it would overtake it")
	}
}
