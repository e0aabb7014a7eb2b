package main

import (
	"log/slog"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
)

// process is one consumer process on the topology.
type process = brokerdemo.Process[*rabbitmq.Consumer[string, ledger.AccountEvent]]

func startProcess(url string, topo rabbitmq.Topology, name string, sh brokerdemo.Shared) (*process, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := rabbitmq.NewConsumer[string, ledger.AccountEvent](rabbitmq.Config[ledger.AccountEvent]{
		URL:      url,
		Topology: topo,
		Codec:    ledger.AccountCodec{},
		Prefetch: 64,
		Name:     name,
		Logger:   quiet,
	})
	if err != nil {
		return nil, err
	}
	return brokerdemo.Start(name, c, sh)
}
