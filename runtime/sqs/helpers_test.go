package sqs_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
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
