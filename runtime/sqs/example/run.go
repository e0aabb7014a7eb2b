package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transport"
)

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, endpoint string, cfg brokerdemo.Config) error {
	start := time.Now()
	client := sqs.New(sqs.Options{BaseEndpoint: aws.String(endpoint), Region: "us-east-1", Credentials: aws.AnonymousCredentials{}})
	var b8 [4]byte
	_, _ = rand.Read(b8[:])
	name := "ledger-accounts-" + hex.EncodeToString(b8[:])
	queue, err := createQueue(ctx, client, name+".fifo")
	if err != nil {
		return err
	}
	defer deleteQueue(client, queue)
	dlq, err := createQueue(ctx, client, name+"-dlq.fifo")
	if err != nil {
		return err
	}
	defer deleteQueue(client, dlq)

	accounts := brokerdemo.Stream(cfg.Seed, 0x6f72646572, cfg.Accounts, cfg.Events)
	total := cfg.Accounts * cfg.Events
	sh := brokerdemo.NewShared(total, cfg.Slow)
	b, versions := sh.Book, sh.Versions
	a, err := startProcess(client, queue, dlq, "a", sh)
	if err != nil {
		return err
	}
	c, err := startProcess(client, queue, dlq, "b", sh)
	if err != nil {
		a.Kill()
		return err
	}

	sink, err := oq.NewProducer[string, ledger.AccountEvent](oq.ProducerConfig[ledger.AccountEvent]{Client: client, QueueURL: queue, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}
	defer sink.Close(context.Background())
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}
	// A message that does not decode: it goes to the dead-letter queue and
	// its group goes on.
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queue, MessageBody: aws.String("{not json"),
		MessageGroupId: aws.String("acct-000"), MessageDeduplicationId: aws.String("bad-1"),
		MessageAttributes: map[string]types.MessageAttributeValue{transport.HeaderType: {DataType: aws.String("String"), StringValue: aws.String("Deposited")}},
	}); err != nil {
		return err
	}
	k, err := brokerdemo.KillMidStream(ctx, sh, producer, accounts, a, c, func(c *oq.Consumer[string, ledger.AccountEvent]) int { return c.Stats().Unsettled })
	if err != nil {
		return err
	}

	tally := brokerdemo.Check(ctx, b, versions, accounts, cfg.Events)
	as, cs := a.Consumer.Stats(), c.Consumer.Stats()
	skipped := brokerdemo.Skipped(a, c)
	fmt.Fprintln(out, "ordergen sqs example: the ledger schema across two consumer processes (SQS FIFO queue, message groups)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, sent by AccountProducer to %s, group AccountID, deduplicated by AccountID and Version\n", cfg.Accounts, total, name+".fifo")
	fmt.Fprintf(out, "consumers  a and b receiving in batches of 10, visibility 2s extended while handled, 64 keys in progress each\n")
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d messages unsettled, %d accepted events abandoned\n", k.Applied, total, k.Unsettled, k.Abandoned)
	fmt.Fprintf(out, "takeover   a's undeleted messages came back after their visibility: %d re-delivered events skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d\n", tally.By["a"], tally.By["b"])
	fmt.Fprintf(out, "dead letter 1 undecodable message sent to the dead-letter queue (%d send(s)); its group kept flowing\n", as.DeadLettered+cs.DeadLettered)
	return brokerdemo.Report(out, tally, total, as.DeadLettered+cs.DeadLettered >= 1, start)
}

func createQueue(ctx context.Context, client *sqs.Client, name string) (string, error) {
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		string(types.QueueAttributeNameFifoQueue): "true", string(types.QueueAttributeNameVisibilityTimeout): "2",
	}})
	if err != nil {
		return "", fmt.Errorf("create queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

func deleteQueue(client *sqs.Client, url string) {
	_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url})
}

// process is one consumer process of the queue.
type process = brokerdemo.Process[*oq.Consumer[string, ledger.AccountEvent]]

func startProcess(client *sqs.Client, queue, dlq, name string, sh brokerdemo.Shared) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := oq.NewConsumer[string, ledger.AccountEvent](oq.Config[ledger.AccountEvent]{
		Client: client, QueueURL: queue, Codec: ledger.AccountCodec{}, DeadLetterQueueURL: dlq,
		VisibilityTimeout: 2 * time.Second, WaitTime: time.Second, Logger: quiet,
	})
	if err != nil {
		return nil, err
	}
	return brokerdemo.Start(name, c, sh)
}
