package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
)

const (
	project      = "ordergen-example"
	topic        = "ledger-accounts"
	deadLetters  = "ledger-accounts-dlt"
	subscription = "ledger"
)

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg brokerdemo.Config) error {
	start := time.Now()
	srv := pstest.NewServer()
	defer srv.Close()
	opts := []option.ClientOption{option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	client, err := pubsub.NewClient(ctx, project, opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	for _, t := range []string{topic, deadLetters} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + project + "/topics/" + t}); err != nil {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + project + "/subscriptions/" + subscription, Topic: "projects/" + project + "/topics/" + topic,
		EnableMessageOrdering: true,
	}); err != nil {
		return fmt.Errorf("create subscription: %w", err)
	}

	accounts := brokerdemo.Stream(cfg.Seed, 0x6f72646572, cfg.Accounts, cfg.Events)
	total := cfg.Accounts * cfg.Events
	sh := brokerdemo.NewShared(total, cfg.Slow)
	b, versions := sh.Book, sh.Versions
	a, err := startProcess(client, "a", sh)
	if err != nil {
		return err
	}
	c, err := startProcess(client, "b", sh)
	if err != nil {
		a.Kill()
		return err
	}

	// The producer reaches Pub/Sub as the consumers do: through the
	// client (a publisher of its own, with message ordering, stopped with
	// it).
	sink, err := ps.NewProducer[string, ledger.AccountEvent](ps.ProducerConfig[ledger.AccountEvent]{Client: client, Topic: topic, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}
	defer func() { _ = sink.Close(context.Background()) }()
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}
	// A message that does not decode: it goes to the dead-letter topic and
	// its key goes on.
	pub := client.Publisher(topic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	if _, err := pub.Publish(ctx, &pubsub.Message{Data: []byte("{not json"), OrderingKey: "acct-000",
		Attributes: map[string]string{transport.HeaderType: "Deposited"}}).Get(ctx); err != nil {
		return err
	}
	k, err := brokerdemo.KillMidStream(ctx, sh, producer, accounts, a, c, func(c *ps.Consumer[string, ledger.AccountEvent]) int { return c.Stats().Unsettled })
	if err != nil {
		return err
	}

	tally := brokerdemo.Check(ctx, b, versions, accounts, cfg.Events)
	as, cs := a.Consumer.Stats(), c.Consumer.Stats()
	skipped := brokerdemo.Skipped(a, c)
	fmt.Fprintln(out, "ordergen pubsub example: the ledger schema across two consumer processes (in-process pstest, ordering keys)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, published by AccountProducer to %s, ordering key AccountID\n", cfg.Accounts, total, topic)
	fmt.Fprintf(out, "consumers  a and b on subscription %s (message ordering on), 64 keys in progress each\n", subscription)
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d messages unsettled, %d accepted events abandoned\n", k.Applied, total, k.Unsettled, k.Abandoned)
	fmt.Fprintf(out, "takeover   Pub/Sub delivered a's unacknowledged messages again: %d re-delivered events skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d\n", tally.By["a"], tally.By["b"])
	fmt.Fprintf(out, "dead letter 1 undecodable message sent to %s (%d publish(es)); its key kept flowing\n", deadLetters, as.DeadLettered+cs.DeadLettered)
	return brokerdemo.Report(out, tally, total, as.DeadLettered+cs.DeadLettered >= 1, start)
}

// process is one consumer process of the subscription.
type process = brokerdemo.Process[*ps.Consumer[string, ledger.AccountEvent]]

func startProcess(client *pubsub.Client, name string, sh brokerdemo.Shared) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := ps.NewConsumer[string, ledger.AccountEvent](ps.Config[ledger.AccountEvent]{
		Client: client, Subscription: subscription, Codec: ledger.AccountCodec{}, DeadLetterTopic: deadLetters,
		// What a crashed consumer had in transit comes back after the
		// stream's ack deadline: the shortest there is.
		ReceiveSettings: pubsub.ReceiveSettings{MaxDurationPerAckExtension: 10 * time.Second},
		Logger:          quiet,
	})
	if err != nil {
		return nil, err
	}
	return brokerdemo.Start(name, c, sh)
}
