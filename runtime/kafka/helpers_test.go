package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

const (
	topic = "events"
	dlt   = "events.dlt"
)

// ev is the test entity's one event: the Seq-th event of Key, from 1; codec
// encodes it (by JSON, as event type "ev"). Package kafka's own tests use
// them too.
type (
	ev    = kafka.TestEv
	codec = kafka.TestCodec
)

// newCluster starts a kfake cluster with the events topic (partitions
// partitions) and the dead-letter topic, closed when the test ends.
func newCluster(t *testing.T, partitions int32, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic), kfake.SeedTopics(1, dlt)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes events for keys keys, n each, in order per key, from
// several goroutines.
func produce(t *testing.T, c *kfake.Cluster, keys []string, from, to int) {
	t.Helper()
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	const workers = 8
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(keys); i += workers {
				for seq := from; seq <= to; seq++ {
					if err := p.Send(context.Background(), keys[i], ev{keys[i], seq}); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
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
	c      *kafka.Consumer[string, ev]
	engine *runtime.Engine[string, ev]
	cancel context.CancelFunc
	done   chan error
}

// crashable is the cluster option of tests that crash members (kill): a
// crashed member leaves its group if it can within a second
// (leaveTimeout); on a loaded machine it may not, and its partitions then
// move when its session times out. kgo's default session is 45 s, with a
// minute to rebalance, longer than such a test waits; shortSessions gives
// the members of those tests sessions of 3 s (the cluster's minimum is
// lowered to 1 s for them).
var crashable = kfake.GroupMinSessionTimeout(time.Second)

// shortSessions is a memberOpts.cfg for a cluster made crashable.
func shortSessions(cfg *kafka.Config[ev]) {
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.SessionTimeout(3*time.Second), kgo.RebalanceTimeout(8*time.Second))
}

type memberOpts struct {
	cfg     func(*kafka.Config[ev])
	handler runtime.Handler[string, ev]
	engine  func(*runtime.Config[string, ev])
	wrap    func(transport.Target[ev]) transport.Target[ev]
}

func startMember(t *testing.T, c *kfake.Cluster, group string, o memberOpts) *member {
	t.Helper()
	cfg := kafka.Config[ev]{
		ClientOpts: []kgo.Opt{
			kgo.SeedBrokers(c.ListenAddrs()...),
			kgo.HeartbeatInterval(100 * time.Millisecond),
			kgo.FetchMaxWait(100 * time.Millisecond),
		},
		Group:           group,
		Logger:          slog.New(slog.DiscardHandler),
		Topics:          []string{topic},
		Codec:           codec{},
		DeadLetterTopic: dlt,
		CommitInterval:  50 * time.Millisecond,
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	kc, err := kafka.NewConsumer[string, ev](cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := runtime.Config[string, ev]{MaxActive: 32, OnOutcome: kc.OnOutcome, Retry: runtime.Retry{Attempts: 1}, Logger: slog.New(slog.DiscardHandler)}
	if o.engine != nil {
		o.engine(&rc)
	}
	e, err := runtime.New(o.handler, rc)
	if err != nil {
		t.Fatal(err)
	}
	target := transport.EngineTarget(e)
	if o.wrap != nil {
		target = o.wrap(target)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{c: kc, engine: e, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- kc.Run(ctx, target) }()
	return m
}

// stop closes the member cleanly: the consumer drains and commits, then
// the engine closes.
func (m *member) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
// stops without draining or committing and leaves the group.
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
