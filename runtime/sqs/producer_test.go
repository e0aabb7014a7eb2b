package sqs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transport"
)

// A failed send pauses its key: the key's later sends fail at once with
// ErrKeyPaused, other keys go on, and Resume lets the key through again.
func TestProducerPausesKeyAfterFailure(t *testing.T) {
	q := newQueues(t, "pause", 2*time.Second)
	p := q.producer(t)
	ctx := context.Background()
	// The body SQS refuses: too large (over 1 MiB).
	huge := strings.Repeat("x", 1<<20+1)
	if err := p.Send(ctx, "k", ev{huge, 1}); err == nil {
		t.Fatal("a send SQS must refuse succeeded")
	}
	if err := p.Send(ctx, "k", ev{"k", 2}); !errors.Is(err, transport.ErrKeyPaused) {
		t.Fatalf("the next send of the key: %v, want ErrKeyPaused", err)
	}
	if err := p.Send(ctx, "other", ev{"other", 1}); err != nil {
		t.Fatalf("another key: %v", err)
	}
	p.Resume("k")
	if err := p.Send(ctx, "k", ev{"k", 2}); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
}

// Events with the same key and version are queued once (the deduplication
// ID is the group and the version); another version is queued.
func TestProducerDeduplicatesByVersion(t *testing.T) {
	q := newQueues(t, "dedup", 2*time.Second)
	p := q.producer(t)
	ctx := context.Background()
	for _, e := range []ev{{"k", 1}, {"k", 1}, {"k", 2}} {
		if err := p.Send(ctx, "k", e); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < 3 {
		out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
			if _, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], `"Seq":1`) || !strings.Contains(got[1], `"Seq":2`) {
		t.Errorf("queued %q, want versions 1 and 2 once each", got)
	}
}

func TestMessageGroupID(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"a-1", "a-1"},
		{"with space", "sha256:"},
		{"ünïcode", "sha256:"},
		{strings.Repeat("k", 128), strings.Repeat("k", 128)},
		{strings.Repeat("k", 129), "sha256:"},
	} {
		got, err := oq.MessageGroupID(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "sha256:" {
			if !strings.HasPrefix(got, "sha256:") || len(got) != 7+64 {
				t.Errorf("MessageGroupID(%q) = %q, want a sha256: ID", tc.key, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("MessageGroupID(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
	if got, _ := oq.MessageGroupID(42); got != "42" {
		t.Errorf("MessageGroupID(42) = %q", got)
	}
	if _, err := oq.MessageGroupID(struct{}{}); err == nil {
		t.Error("a struct key was accepted")
	}
}

func TestConfigRefusals(t *testing.T) {
	client := sqs.New(sqs.Options{Region: "us-east-1"})
	base := oq.Config[ev]{Client: client, QueueURL: "http://q/x.fifo", Codec: codec{}, DeadLetterQueueURL: "http://q/d.fifo"}
	for name, mod := range map[string]func(*oq.Config[ev]){
		"no client":       func(c *oq.Config[ev]) { c.Client = nil },
		"standard queue":  func(c *oq.Config[ev]) { c.QueueURL = "http://q/x" },
		"no codec":        func(c *oq.Config[ev]) { c.Codec = nil },
		"no dead letters": func(c *oq.Config[ev]) { c.DeadLetterQueueURL = "" },
		"visibility":      func(c *oq.Config[ev]) { c.VisibilityTimeout = 13 * time.Hour },
		"wait":            func(c *oq.Config[ev]) { c.WaitTime = 21 * time.Second },
	} {
		cfg := base
		mod(&cfg)
		if _, err := oq.NewConsumer[string, ev](cfg); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := oq.NewConsumer[string, ev](base); err != nil {
		t.Errorf("a good config: %v", err)
	}
	if _, err := oq.NewProducer[string, ev](oq.ProducerConfig[ev]{Client: client, QueueURL: "http://q/x", Codec: codec{}}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("a producer of a standard queue: %v, want ErrInvalidConfig", err)
	}
	var _ durable.Codec[ev] = codec{}
}
