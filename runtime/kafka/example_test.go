package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

// A producer writes a key's events; a consumer feeds them to a runtime
// engine (one subscriber), which handles them in order.
func Example() {
	cluster, _ := kfake.NewCluster(kfake.SeedTopics(3, "events"), kfake.SeedTopics(1, "events.dlt"))
	defer cluster.Close()
	ctx := context.Background()

	pcl, _ := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	defer pcl.Close()
	p, _ := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: pcl, Topic: "events", Codec: codec{}})
	for seq := 1; seq <= 3; seq++ {
		if err := p.Send(ctx, "alice", ev{"alice", seq}); err != nil {
			fmt.Println(err)
		}
	}

	c, _ := kafka.NewConsumer[string, ev](kafka.Config[ev]{
		ClientOpts:      []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)},
		Group:           "example",
		Topics:          []string{"events"},
		Codec:           codec{},
		DeadLetterTopic: "events.dlt",
		Logger:          slog.New(slog.DiscardHandler),
	})
	var wg sync.WaitGroup
	wg.Add(3)
	e, _ := runtime.New(func(_ context.Context, key string, e ev) error {
		fmt.Println("handled", key, e.Seq)
		wg.Done()
		return nil
	}, runtime.Config[string, ev]{OnOutcome: c.OnOutcome})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, transport.EngineTarget(e)) }()
	wg.Wait()
	fmt.Println("close:", c.Close(ctx), <-done, e.Close(ctx))
	// Output:
	// handled alice 1
	// handled alice 2
	// handled alice 3
	// close: <nil> <nil> <nil>
}
