package pubsub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

const (
	project = "ordergen"
	topic   = "events"
	dlt     = "events-dlt"
	sub     = "ledger"
)

// ev is the test entity's one event: the Seq-th event of Key, from 1.
type ev struct {
	Key string
	Seq int
}

func (e ev) EventKey() string { return e.Key }

type codec struct{}

func (codec) Encode(e ev) (string, []byte, error) {
	data, err := json.Marshal(e)
	return "ev", data, err
}

func (codec) Decode(name string, data []byte) (ev, error) {
	var e ev
	if name != "ev" {
		return e, fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("%w: %v", runtime.ErrInvalidEvent, err)
	}
	return e, nil
}

// fake is a pstest server with the events topic, its dead-letter topic and
// an ordered subscription, and the clients to reach it.
type fake struct {
	srv *pstest.Server
}

func newFake(t *testing.T, opts ...func(*pubsubpb.Subscription)) *fake {
	t.Helper()
	return newFakeWith(t, nil, opts...)
}

// newFakeWith is newFake with reactors on the server's calls.
func newFakeWith(t *testing.T, reactors []pstest.ServerReactorOption, opts ...func(*pubsubpb.Subscription)) *fake {
	t.Helper()
	srv := pstest.NewServer(reactors...)
	t.Cleanup(func() { _ = srv.Close() })
	f := &fake{srv: srv}
	cl := f.client(t)
	ctx := context.Background()
	for _, name := range []string{topic, dlt} {
		if _, err := cl.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + project + "/topics/" + name}); err != nil {
			t.Fatal(err)
		}
	}
	s := &pubsubpb.Subscription{
		Name:                  "projects/" + project + "/subscriptions/" + sub,
		Topic:                 "projects/" + project + "/topics/" + topic,
		EnableMessageOrdering: true,
		AckDeadlineSeconds:    10,
	}
	for _, o := range opts {
		o(s)
	}
	if _, err := cl.SubscriptionAdminClient.CreateSubscription(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name:  "projects/" + project + "/subscriptions/dead",
		Topic: "projects/" + project + "/topics/" + dlt,
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// client returns a client of the fake, closed when the test ends.
func (f *fake) client(t *testing.T) *pubsub.Client {
	t.Helper()
	cl, err := pubsub.NewClient(context.Background(), project, f.opts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// opts are the client options that reach the fake.
func (f *fake) opts() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(f.srv.Addr),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// producer returns a producer of the events topic.
func (f *fake) producer(t *testing.T) *ps.Producer[string, ev] {
	t.Helper()
	pub := f.client(t).Publisher(topic)
	pub.EnableMessageOrdering = true
	pub.PublishSettings.DelayThreshold = time.Millisecond
	t.Cleanup(pub.Stop)
	p, err := ps.NewProducer[string, ev](ps.ProducerConfig[ev]{Publisher: pub, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// produce publishes events from..to of every key, in order per key, from
// several goroutines.
func (f *fake) produce(t *testing.T, ks []string, from, to int) {
	t.Helper()
	p := f.producer(t)
	var wg sync.WaitGroup
	errs := make(chan error, len(ks))
	for _, k := range ks {
		wg.Go(func() {
			for seq := from; seq <= to; seq++ {
				p.SendAsync(context.Background(), k, ev{k, seq}, func(err error) {
					if err != nil {
						errs <- err
					}
				})
			}
		})
	}
	wg.Wait()
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%03d", i)
	}
	return out
}

// book is the tests' shared database (transporttest.Applied), fed with
// this package's events.
type book struct{ *transporttest.Applied }

func newBook(want int) book { return book{transporttest.NewApplied(want)} }

func (b book) apply(who string, e ev) { b.Apply(who, e.Key, e.Seq) }

// handler returns a handler that applies every event to b as who.
func (b book) handler(who string) runtime.Handler[string, ev] {
	return func(_ context.Context, _ string, e ev) error {
		b.apply(who, e)
		return nil
	}
}

// member is one consumer process: a consumer and its engine.
type member struct {
	c      *ps.Consumer[string, ev]
	engine *runtime.Engine[string, ev]
	cancel context.CancelFunc
	done   chan error
}

type memberOpts struct {
	cfg     func(*ps.Config[ev])
	handler runtime.Handler[string, ev]
	engine  func(*runtime.Config[string, ev])
}

func (f *fake) start(t *testing.T, o memberOpts) *member {
	t.Helper()
	cfg := ps.Config[ev]{
		Client:          f.client(t),
		Subscription:    sub,
		Codec:           codec{},
		DeadLetterTopic: dlt,
		Logger:          testLogger(),
		DrainTimeout:    5 * time.Second,
		// Messages the fake sent to a consumer that stopped reading come
		// back after the stream's ack deadline: the shortest there is.
		ReceiveSettings: pubsub.ReceiveSettings{MaxDurationPerAckExtension: 10 * time.Second},
	}
	ps.SetSweepEvery(&cfg, 20*time.Millisecond)
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	c, err := ps.NewConsumer[string, ev](cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := runtime.Config[string, ev]{MaxActive: 32, OnOutcome: c.OnOutcome, Retry: runtime.Retry{Attempts: 1}, Logger: slog.New(slog.DiscardHandler)}
	if o.engine != nil {
		o.engine(&rc)
	}
	e, err := runtime.New(o.handler, rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{c: c, engine: e, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- c.Run(ctx, transport.EngineTarget(e)) }()
	return m
}

// stop closes the member cleanly: the consumer drains and settles, then
// the engine closes.
func (m *member) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.c.Close(ctx); err != nil {
		t.Errorf("consumer close: %v", err)
	}
	if err := m.engine.Close(ctx); err != nil {
		t.Errorf("engine close: %v", err)
	}
	m.cancel()
}

// kill stops the member as a crash would: the engine is aborted (running
// handlers are cancelled, pending events are lost), then the consumer
// stops at once.
func (m *member) kill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = m.engine.Close(ctx)
	m.cancel()
	if err := <-m.done; err == nil {
		t.Errorf("run after kill returned nil")
	}
}

// eventually polls cond until it holds, or fails the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond) // polling: no signal exists for these states
	}
}

// dead reads n messages from the dead-letter topic's subscription.
func (f *fake) dead(t *testing.T, n int) []*pubsub.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var out []*pubsub.Message
	s := f.client(t).Subscriber("dead")
	err := s.Receive(ctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		mu.Lock()
		defer mu.Unlock()
		out = append(out, m)
		if len(out) == n {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(out) < n {
		t.Fatalf("%d dead letters, want %d", len(out), n)
	}
	return out
}

// testLogger discards, unless ORDERGEN_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("ORDERGEN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// slogTo returns a logger that keeps its messages in l.
func slogTo(l *logSink) *slog.Logger { return slog.New(sinkHandler{l}) }

type sinkHandler struct{ l *logSink }

func (h sinkHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h sinkHandler) Handle(_ context.Context, r slog.Record) error {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	h.l.msgs = append(h.l.msgs, r.Message)
	return nil
}
func (h sinkHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h sinkHandler) WithGroup(string) slog.Handler      { return h }
