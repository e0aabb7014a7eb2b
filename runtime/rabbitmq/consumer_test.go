package rabbitmq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

type event = transporttest.Event

var codec = transporttest.Codec{}

// topology returns a transient topology unique to the test.
func topology(t *testing.T, queues int) rabbitmq.Topology {
	name := fmt.Sprintf("ogt-%s-%d", t.Name(), time.Now().UnixNano())
	for i := range len(name) {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			name = name[:i] + "-" + name[i+1:]
		}
	}
	return rabbitmq.Topology{Name: name, Queues: queues, Transient: true}
}

// declared declares topo on the test broker and deletes it when the test
// ends.
func declared(t *testing.T, topo rabbitmq.Topology) *amqp.Connection {
	t.Helper()
	conn := dial(t)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Declare(ch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ch, err := conn.Channel(); err == nil {
			_ = topo.Delete(ch)
		}
	})
	return conn
}

// journal records the events handled, per key in order, and counts those
// that were the next of their key (a duplicate is recorded, not counted).
type journal struct {
	mu      sync.Mutex
	byKey   map[string][]int
	last    map[string]int
	n       int
	waiters map[int]chan struct{}
}

func newJournal() *journal {
	return &journal{byKey: map[string][]int{}, last: map[string]int{}, waiters: map[int]chan struct{}{}}
}

func (j *journal) add(e event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.byKey[e.Key] = append(j.byKey[e.Key], e.Seq)
	if e.Seq != j.last[e.Key]+1 {
		return
	}
	j.last[e.Key] = e.Seq
	j.n++
	for n, ch := range j.waiters {
		if j.n >= n {
			close(ch)
			delete(j.waiters, n)
		}
	}
}

// reached returns a channel closed once n events were handled, each the
// next of its key.
func (j *journal) reached(n int) <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	ch := make(chan struct{})
	if j.n >= n {
		close(ch)
		return ch
	}
	j.waiters[n] = ch
	return ch
}

func (j *journal) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.n
}

// inOrder fails t unless every key's events were handled once each, 1 to
// its count, in order (dups allowed when dups is true: the guard's job).
func (j *journal) inOrder(t *testing.T, want map[string]int, dups bool) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	for k, n := range want {
		last := 0
		for _, seq := range j.byKey[k] {
			switch {
			case seq == last+1:
				last = seq
			case seq <= last && dups:
			default:
				t.Errorf("key %s: handled %v, want 1..%d in order", k, j.byKey[k], n)
				return
			}
		}
		if last != n {
			t.Errorf("key %s: handled up to %d, want %d", k, last, n)
		}
	}
}

func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// running is a consumer running over an engine.
type running struct {
	c      *rabbitmq.Consumer[string, event]
	engine *runtime.Engine[string, event]
	done   chan error
	cancel context.CancelFunc
}

func start(t *testing.T, cfg rabbitmq.Config[event], h runtime.Handler[string, event], adjust func(*runtime.Config[string, event])) *running {
	t.Helper()
	cfg.URL = brokerURL(t)
	cfg.Codec = codec
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReconnectDelay == 0 {
		cfg.ReconnectDelay = 10 * time.Millisecond
	}
	c, err := rabbitmq.NewConsumer[string, event](cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := runtime.Config[string, event]{OnOutcome: c.OnOutcome, Retry: runtime.Retry{Attempts: 1}, Logger: slog.New(slog.DiscardHandler)}
	if adjust != nil {
		adjust(&rc)
	}
	e, err := runtime.New(h, rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{c: c, engine: e, done: make(chan error, 1), cancel: cancel}
	go func() { r.done <- c.Run(ctx, transport.EngineTarget(e)) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
		_ = e.Close(transport.DoneContext())
	})
	return r
}

// stop closes r cleanly and fails t unless Run returns nil.
func (r *running) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := r.engine.Close(ctx); err != nil {
		t.Errorf("engine Close: %v", err)
	}
}

func producer(t *testing.T, topo rabbitmq.Topology) *rabbitmq.Producer[string, event] {
	t.Helper()
	p, err := rabbitmq.NewProducer[string, event](rabbitmq.ProducerConfig[event]{URL: brokerURL(t), Topology: topo, Codec: codec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func send(t *testing.T, p *rabbitmq.Producer[string, event], evs ...event) {
	t.Helper()
	ctx := within(t, 30*time.Second)
	for _, e := range evs {
		if err := p.Send(ctx, e.Key, e); err != nil {
			t.Fatalf("send %+v: %v", e, err)
		}
	}
}

// A slow key holds only its own message's room in the prefetch: every
// message acknowledged as it finishes, the queue's other keys flow past a
// message that is still running. (Acknowledging only up to the lowest
// unfinished message, as a Kafka commit does, would stop the queue once
// the prefetch is full behind it.)
func TestSlowKeyHoldsOnlyItsOwnPrefetch(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	j := newJournal()
	gate := make(chan struct{})
	r := start(t, rabbitmq.Config[event]{Topology: topo, Prefetch: 4}, func(ctx context.Context, key string, e event) error {
		if key == "slow" {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		j.add(e)
		return nil
	}, nil)
	p := producer(t, topo)
	send(t, p, event{Key: "slow", Seq: 1})
	want := map[string]int{"slow": 1}
	var evs []event
	for i := range 50 {
		k := fmt.Sprintf("k%02d", i)
		want[k] = 1
		evs = append(evs, event{Key: k, Seq: 1})
	}
	send(t, p, evs...)
	await(t, j.reached(50), "the 50 other keys to pass the slow one")
	close(gate)
	await(t, j.reached(51), "the slow key")
	r.stop(t)
	j.inOrder(t, want, false)
}

// When the connection drops, the consumer reconnects by itself; the broker
// delivers again what it had not acknowledged, and every event is handled
// in order.
func TestReconnectsAfterConnectionLoss(t *testing.T) {
	topo := topology(t, 2)
	declared(t, topo)
	j := newJournal()
	socks := &sockets{}
	r := start(t, rabbitmq.Config[event]{Topology: topo, AMQP: amqp.Config{Dial: socks.dial}}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, nil)
	p := producer(t, topo)
	want := map[string]int{}
	batch := func(from, to int) {
		var evs []event
		for seq := from; seq <= to; seq++ {
			for k := range 10 {
				key := fmt.Sprintf("k%d", k)
				evs = append(evs, event{Key: key, Seq: seq})
				want[key] = seq
			}
		}
		send(t, p, evs...)
	}
	batch(1, 20)
	await(t, j.reached(100), "the first events")
	socks.cut()
	batch(21, 40)
	await(t, j.reached(400), "every event after the reconnection")
	if st := r.c.Stats(); st.Reconnects == 0 {
		t.Errorf("stats %+v: no reconnection counted", st)
	}
	r.stop(t)
	j.inOrder(t, want, true)
}

// A queue deleted under the consumer (the broker cancels its consumption)
// is declared and subscribed again; messages published to it after that
// are handled.
func TestResubscribesAQueueDeletedUnderIt(t *testing.T) {
	topo := topology(t, 1)
	conn := declared(t, topo)
	j := newJournal()
	r := start(t, rabbitmq.Config[event]{Topology: topo}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, nil)
	p := producer(t, topo)
	send(t, p, event{Key: "a", Seq: 1})
	await(t, j.reached(1), "the first event")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(topo.Queue(0), false, false, false); err != nil {
		t.Fatal(err)
	}
	// Sends fail (unroutable) until the consumer declared the queue again.
	ctx := within(t, 30*time.Second)
	for seq := 2; ; {
		err := p.Send(ctx, "a", event{Key: "a", Seq: seq})
		if err == nil {
			break
		}
		if !errors.Is(err, rabbitmq.ErrUnroutable) && !errors.Is(err, transport.ErrKeyPaused) {
			t.Fatalf("send: %v", err)
		}
		p.Resume("a")
		time.Sleep(10 * time.Millisecond) // polling the broker: no event says the queue is back
		if ctx.Err() != nil {
			t.Fatal("the queue never came back")
		}
	}
	await(t, j.reached(2), "the event published after the queue came back")
	if st := r.c.Stats(); st.UnitLosses == 0 {
		t.Errorf("stats %+v: no queue loss counted", st)
	}
	r.stop(t)
}

// Messages that cannot be handled are rejected to the dead-letter
// exchange, each with the broker's x-death header and counted by reason;
// the queue goes on.
func TestBadMessagesAreRejectedToTheDeadLetterQueue(t *testing.T) {
	topo := topology(t, 1)
	conn := declared(t, topo)
	j := newJournal()
	mp := metricstest.New()
	r := start(t, rabbitmq.Config[event]{Topology: topo, MeterProvider: mp}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, nil)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	_, good, _ := codec.Encode(event{Key: "a", Seq: 1})
	_, other, _ := codec.Encode(event{Key: "b", Seq: 1})
	bad := []struct {
		reason transport.Reason
		msg    amqp.Publishing
	}{
		{transport.ReasonMissingType, amqp.Publishing{Headers: amqp.Table{transport.HeaderKey: "a"}, Body: good}},
		{transport.ReasonUnknownType, amqp.Publishing{Headers: amqp.Table{transport.HeaderKey: "a"}, Type: "Nope", Body: good}},
		{transport.ReasonUndecodable, amqp.Publishing{Headers: amqp.Table{transport.HeaderKey: "a"}, Type: transporttest.EventType, Body: []byte("{")}},
		{transport.ReasonMissingKey, amqp.Publishing{Type: transporttest.EventType, Body: good}},
		{transport.ReasonKeyMismatch, amqp.Publishing{Headers: amqp.Table{transport.HeaderKey: "a"}, Type: transporttest.EventType, Body: other}},
	}
	ctx := within(t, 30*time.Second)
	for _, b := range bad {
		if err := ch.PublishWithContext(ctx, topo.Name, "a", false, false, b.msg); err != nil {
			t.Fatal(err)
		}
	}
	p := producer(t, topo)
	send(t, p, event{Key: "a", Seq: 1})
	await(t, j.reached(1), "the good event after the bad ones")
	var got []amqp.Delivery
	for len(got) < len(bad) {
		d, ok, err := ch.Get(topo.DeadLetterQueue(), true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(10 * time.Millisecond) // polling the queue
			if ctx.Err() != nil {
				t.Fatalf("%d dead letters, want %d", len(got), len(bad))
			}
			continue
		}
		got = append(got, d)
	}
	for i, d := range got {
		deaths, _ := d.Headers["x-death"].([]any)
		if len(deaths) == 0 {
			t.Errorf("dead letter %d has no x-death header: %v", i, d.Headers)
			continue
		}
		if death, _ := deaths[0].(amqp.Table); death["reason"] != "rejected" || death["queue"] != topo.Queue(0) {
			t.Errorf("dead letter %d: x-death %v, want rejected from %s", i, death, topo.Queue(0))
		}
	}
	m := mp.Collect()
	for _, b := range bad {
		if n, _ := m.Sum(rabbitmq.MetricDeadLettered, meter.Attribute{Key: rabbitmq.AttrDeadLetterReason, Value: string(b.reason)}); n != 1 {
			t.Errorf("%s: counted %v dead letters, want 1", b.reason, n)
		}
	}
	r.stop(t)
	if st := r.c.Stats(); st.Rejected != uint64(len(bad)) {
		t.Errorf("stats %+v: want %d rejected", st, len(bad))
	}
}

// Cancelling Run's context stops the consumer as a crash would: Run
// returns the context's error, nothing more is acknowledged, and the
// broker delivers what it had not acknowledged to the next consumer.
func TestContextEndStopsAsACrash(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	j := newJournal()
	started := make(chan struct{}, 1)
	r := start(t, rabbitmq.Config[event]{Topology: topo}, func(ctx context.Context, _ string, e event) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}, nil)
	p := producer(t, topo)
	send(t, p, event{Key: "a", Seq: 1}, event{Key: "a", Seq: 2}, event{Key: "b", Seq: 1})
	await(t, started, "a handler to start")
	r.cancel()
	select {
	case err := <-r.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		r.done <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	r2 := start(t, rabbitmq.Config[event]{Topology: topo}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, nil)
	await(t, j.reached(3), "the events the first consumer never finished")
	r2.stop(t)
	j.inOrder(t, map[string]int{"a": 2, "b": 1}, false)
}

// Regression: the lanes' backlog is shared by the queues, so room made by
// one queue's outcome must wake every queue whose messages wait for room.
// (Each settlement used to wake only its own queue's loop: with a backlog
// of one event, the queue that lost the race for room waited forever once
// the other had nothing left.)
func TestRoomMadeByOneQueueWakesTheOthers(t *testing.T) {
	topo := topology(t, 2)
	topo.Routing = rabbitmq.PublisherHash
	declared(t, topo)
	keys := map[int]string{}
	for i := 0; len(keys) < 2; i++ {
		k := fmt.Sprintf("k%d", i)
		if _, ok := keys[topo.QueueOf(k)]; !ok {
			keys[topo.QueueOf(k)] = k
		}
	}
	j := newJournal()
	r := start(t, rabbitmq.Config[event]{Topology: topo}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, func(rc *runtime.Config[string, event]) {
		rc.Backlog = runtime.Backlog{PerKey: 1, Total: 1, WhenFull: runtime.Reject}
	})
	p := producer(t, topo)
	want := map[string]int{}
	var evs []event
	for seq := 1; seq <= 20; seq++ {
		for _, k := range keys {
			evs = append(evs, event{Key: k, Seq: seq})
			want[k] = seq
		}
	}
	send(t, p, evs...)
	await(t, j.reached(40), "both queues' events through a backlog of one")
	r.stop(t)
	j.inOrder(t, want, false)
}

// What the broker refuses for good ends Run with an error wrapping
// ErrInvalidConfig instead of a reconnection loop: wrong credentials, and queues
// declared with other arguments than the topology's.
func TestRunEndsOnWhatTheBrokerRefuses(t *testing.T) {
	url := brokerURL(t)
	bad, err := amqp.ParseURI(url)
	if err != nil {
		t.Fatal(err)
	}
	bad.Password = "wrong-" + bad.Password
	topo := topology(t, 1)
	conn := dial(t)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// The queue exists without single active consumer.
	if _, err := ch.QueueDeclare(topo.Queue(0), false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ch, err := conn.Channel(); err == nil {
			_, _ = ch.QueueDelete(topo.Queue(0), false, false, false)
			_ = topo.Delete(ch)
		}
	})
	for name, u := range map[string]string{"credentials": bad.String(), "topology": url} {
		if name == "credentials" && testing.Short() {
			continue // the broker answers wrong credentials seconds later
		}
		c, err := rabbitmq.NewConsumer[string, event](rabbitmq.Config[event]{URL: u, Topology: topo, Codec: codec, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		e, err := runtime.New(func(context.Context, string, event) error { return nil }, runtime.Config[string, event]{OnOutcome: c.OnOutcome})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Run(within(t, 30*time.Second), transport.EngineTarget(e))
		if !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: Run returned %v, want an error wrapping ErrInvalidConfig", name, err)
		}
		_ = e.Close(context.Background())
	}
}

// Regression: a socket closed during the handshake makes the client report
// a refusal of the credentials (amqp.ErrCredentials) that the broker never
// sent; Run treated it as final and ended. It dials again now, and the
// consumer goes on once a handshake succeeds.
func TestHandshakeCutIsNotARefusal(t *testing.T) {
	topo := topology(t, 1)
	declared(t, topo)
	var dials atomic.Int32
	cutting := func(network, addr string) (net.Conn, error) {
		c, err := amqp.DefaultDial(30*time.Second)(network, addr)
		if err != nil || dials.Add(1) > 2 {
			return c, err
		}
		return &cutAfterWrites{Conn: c, writes: 2}, nil // the header, then start-ok
	}
	j := newJournal()
	r := start(t, rabbitmq.Config[event]{Topology: topo, AMQP: amqp.Config{Dial: cutting}}, func(_ context.Context, _ string, e event) error {
		j.add(e)
		return nil
	}, nil)
	send(t, producer(t, topo), event{Key: "a", Seq: 1})
	await(t, j.reached(1), "the event, after two handshakes were cut")
	r.stop(t)
	if n := dials.Load(); n < 3 {
		t.Errorf("%d dials, want the two cut and one more", n)
	}
}

// cutAfterWrites closes its connection once it has written writes times.
type cutAfterWrites struct {
	net.Conn
	mu     sync.Mutex
	writes int
}

func (c *cutAfterWrites) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes--; c.writes == 0 {
		_ = c.Conn.Close()
	}
	return n, err
}
