package sqs_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transport"
)

// endpoint returns the emulator's endpoint from ORDERGEN_TEST_SQS, or skips
// the test.
func endpoint(t *testing.T) string {
	t.Helper()
	ep := os.Getenv("ORDERGEN_TEST_SQS")
	if ep == "" {
		t.Skip("ORDERGEN_TEST_SQS is not set: no SQS endpoint to test against (start the emulator with `.ci/fauxqs start DIR` and export what it prints; .ci/run does)")
	}
	return ep
}

// newClient returns an SQS client of the emulator.
func newClient(t *testing.T) *sqs.Client {
	t.Helper()
	ep := endpoint(t)
	return sqs.New(sqs.Options{
		BaseEndpoint: aws.String(ep),
		Region:       "us-east-1",
		Credentials:  aws.AnonymousCredentials{},
	})
}

// queues are a FIFO queue and its FIFO dead-letter queue, made for one
// test and deleted after it.
type queues struct {
	client      *sqs.Client
	url, dlqURL string
	name        string
}

func newQueues(t *testing.T, prefix string, visibility time.Duration) *queues {
	t.Helper()
	client := newClient(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := prefix + "-" + hex.EncodeToString(b[:])
	ctx := context.Background()
	make := func(n string) string {
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(n + ".fifo"), Attributes: map[string]string{
			string(types.QueueAttributeNameFifoQueue):         "true",
			string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(visibility / time.Second)),
		}})
		if err != nil {
			t.Fatalf("create queue %s: %v", n, err)
		}
		url := aws.ToString(out.QueueUrl)
		t.Cleanup(func() { _, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url}) })
		return url
	}
	return &queues{client: client, url: make(name), dlqURL: make(name + "-dlq"), name: name}
}

// testLogger discards, unless ORDERGEN_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("ORDERGEN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// deadLetters reads the dead-letter queue as the messages come, deleting
// them.
type deadLetters struct {
	mu   sync.Mutex
	got  []types.Message
	more chan struct{}
}

func (q *queues) readDead(t *testing.T) *deadLetters {
	d := &deadLetters{more: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.dlqURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
			if err != nil {
				continue
			}
			for _, m := range out.Messages {
				_, _ = q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.dlqURL, ReceiptHandle: m.ReceiptHandle})
				d.mu.Lock()
				d.got = append(d.got, m)
				d.mu.Unlock()
				select {
				case d.more <- struct{}{}:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return d
}

// ev is the test entity's one event: the Seq-th event of Key, from 1.
type ev struct {
	Key string
	Seq int
}

func (e ev) EventKey() string { return e.Key }

// EventVersion makes ev Versioned: its deduplication ID is key and Seq.
func (e ev) EventVersion() uint64 { return uint64(e.Seq) }

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

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%03d", i)
	}
	return out
}

// producer returns a producer of q, closed when the test ends.
func (q *queues) producer(t *testing.T) *oq.Producer[string, ev] {
	t.Helper()
	p, err := oq.NewProducer[string, ev](oq.ProducerConfig[ev]{Client: q.client, QueueURL: q.url, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// member is one consumer process: a consumer and its engine.
type member struct {
	c      *oq.Consumer[string, ev]
	engine *runtime.Engine[string, ev]
	cancel context.CancelFunc
	done   chan error
}

type memberOpts struct {
	cfg     func(*oq.Config[ev])
	handler runtime.Handler[string, ev]
	engine  func(*runtime.Config[string, ev])
}

func (q *queues) start(t *testing.T, o memberOpts) *member {
	t.Helper()
	cfg := oq.Config[ev]{
		Client:             q.client,
		QueueURL:           q.url,
		Codec:              codec{},
		DeadLetterQueueURL: q.dlqURL,
		VisibilityTimeout:  2 * time.Second,
		WaitTime:           time.Second,
		DrainTimeout:       5 * time.Second,
		Logger:             testLogger(),
	}
	oq.SetSweepEvery(&cfg, 20*time.Millisecond)
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	c, err := oq.NewConsumer[string, ev](cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := runtime.Config[string, ev]{MaxActive: 32, OnOutcome: c.OnOutcome, Retry: runtime.Retry{Attempts: 1}, Logger: testLogger()}
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

// stop closes the member cleanly.
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

// kill stops the member as a crash would.
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
