package main

import (
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// process is one consumer process of the group.
type process = brokerdemo.Process[*kafka.Consumer[string, ledger.AccountEvent]]

func startProcess(cluster *kfake.Cluster, name string, sh brokerdemo.Shared) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{
			kgo.SeedBrokers(cluster.ListenAddrs()...),
			kgo.ClientID(name),
			kgo.HeartbeatInterval(100 * time.Millisecond),
			kgo.FetchMaxWait(100 * time.Millisecond),
		},
		Group:           group,
		Topics:          []string{topic},
		Codec:           ledger.AccountCodec{},
		DeadLetterTopic: deadLetters,
		CommitInterval:  100 * time.Millisecond,
		Logger:          quiet,
	})
	if err != nil {
		return nil, err
	}
	return brokerdemo.Start(name, c, sh)
}
