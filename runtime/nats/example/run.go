package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	ledger "github.com/ordergen/ordergen/examples/gen"
	ogn "github.com/ordergen/ordergen/runtime/nats"
	"github.com/ordergen/ordergen/runtime/transport"
)

// topo is the example's topology: the stream ledger-accounts, its subjects
// mapped to 8 partitions by the account's ID.
var topo = ogn.Topology{Name: "ledger-accounts", Partitions: 8}

// run plays the scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg brokerdemo.Config) error {
	start := time.Now()
	dir, err := os.MkdirTemp("", "ordergen-nats-example-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		return err
	}
	go srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		return errors.New("the NATS server did not start")
	}
	url := srv.ClientURL()

	sink, err := ogn.NewProducer[string, ledger.AccountEvent](ogn.ProducerConfig[ledger.AccountEvent]{URL: url, Topology: topo, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}
	defer func() { _ = sink.Close(context.Background()) }()
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		return err
	}
	accounts := brokerdemo.Stream(cfg.Seed, 0x6f72646572, cfg.Accounts, cfg.Events)
	total := cfg.Accounts * cfg.Events
	sh := brokerdemo.NewShared(total, cfg.Slow)
	b, versions := sh.Book, sh.Versions
	a, err := startProcess(url, "a", sh)
	if err != nil {
		return err
	}
	// b starts once a pulls every partition: the server pins each to a,
	// and b stands by until a's pins lapse.
	if err := a.Await(ctx, "pull every partition", func(c *ogn.Consumer[string, ledger.AccountEvent]) bool {
		return c.Stats().Subscribed >= topo.Partitions
	}); err != nil {
		a.Kill()
		return err
	}
	c, err := startProcess(url, "b", sh)
	if err != nil {
		a.Kill()
		return err
	}

	// A message that does not decode: it goes to the dead-letter stream and
	// its key goes on.
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	poison := nats.NewMsg(topo.SubjectOf("acct-000"))
	poison.Header.Set(transport.HeaderType, "Deposited")
	poison.Header.Set(transport.HeaderKey, "acct-000")
	poison.Data = []byte("{not json")
	if err := nc.PublishMsg(poison); err != nil {
		return err
	}
	k, err := brokerdemo.KillMidStream(ctx, sh, producer, accounts, a, c, func(c *ogn.Consumer[string, ledger.AccountEvent]) int { return c.Stats().InFlight })
	if err != nil {
		return err
	}

	tally := brokerdemo.Check(ctx, b, versions, accounts, cfg.Events)
	as, cs := a.Consumer.Stats(), c.Consumer.Stats()
	skipped := brokerdemo.Skipped(a, c)
	fmt.Fprintln(out, "ordergen nats example: the ledger schema across two consumer processes (in-process nats-server, JetStream)")
	fmt.Fprintf(out, "stream     %d accounts, %d events, published by AccountProducer to stream %s, %d partitions by AccountID\n", cfg.Accounts, total, topo.Name, topo.Partitions)
	fmt.Fprintf(out, "consumers  a, then b, pull every partition: the server pins each to a, b stands by; 64 keys in progress each\n")
	fmt.Fprintf(out, "kill       a killed mid-stream (%d of %d events applied): %d messages unsettled, %d accepted events abandoned\n", k.Applied, total, k.Unsettled, k.Abandoned)
	fmt.Fprintf(out, "takeover   b took a's partitions once their pins lapsed: %d re-delivered events skipped by the version guard;\n", skipped)
	fmt.Fprintf(out, "           a applied %d events, b %d\n", tally.By["a"], tally.By["b"])
	fmt.Fprintf(out, "dead letter 1 undecodable message sent to %s (%d publish(es)); its key kept flowing\n", topo.DeadLetterStream(), as.DeadLettered+cs.DeadLettered)
	return brokerdemo.Report(out, tally, total, as.DeadLettered+cs.DeadLettered >= 1, start)
}

// process is one consumer process on the topology.
type process = brokerdemo.Process[*ogn.Consumer[string, ledger.AccountEvent]]

func startProcess(url, name string, sh brokerdemo.Shared) (*process, error) {
	c, err := ogn.NewConsumer[string, ledger.AccountEvent](ogn.Config[ledger.AccountEvent]{
		URL: url, Topology: topo, Codec: ledger.AccountCodec{},
		// What a crashed consumer held comes back after AckWait, and its
		// partitions go to the other consumer after PinnedTTL: short here.
		AckWait: 2 * time.Second, PinnedTTL: 2 * time.Second, Name: name, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	return brokerdemo.Start(name, c, sh)
}
