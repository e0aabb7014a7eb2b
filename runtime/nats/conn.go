package nats

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime/transport"
)

// dial connects without the client's own reconnects (a new connection
// starts clean); the end of ctx cuts a stalled handshake short, and lost
// is told when the connection closes.
func dial(ctx context.Context, url string, opts []nats.Option, lost func(error)) (*nats.Conn, error) {
	opts = append(append([]nats.Option{}, opts...), nats.NoReconnect(), nats.ClosedHandler(func(nc *nats.Conn) {
		lost(cmp.Or(nc.LastError(), nats.ErrConnectionClosed))
	}))
	nc, err := transport.Dial(ctx, func() (*nats.Conn, error) { return nats.Connect(url, opts...) }, (*nats.Conn).Close)
	if err != nil {
		return nil, fmt.Errorf("nats: dial: %w", err)
	}
	return nc, nil
}

// conn is one connection of a consumer (a transport.UnitConn).
type conn[K comparable, E transport.Keyed[K]] struct {
	c              *Consumer[K, E]
	nc             *nats.Conn
	js             jetstream.JetStream
	stream         jetstream.Stream
	leases         *transport.Leases[*held[K, E]]
	ctx            context.Context // ends when the connection closes
	cancel         context.CancelFunc
	leasing        sync.WaitGroup // the leases' Run
	transport.Loss                // when nc closed
}

// connect dials, declares the streams and the partitions' consumers and
// starts the leases.
func connect[K comparable, E transport.Keyed[K]](ctx context.Context, c *Consumer[K, E]) (*conn[K, E], error) {
	cn := &conn[K, E]{c: c}
	// The connection's context ends when it closes, lost or not: the
	// UnitConsumer does not close a lost connection.
	cn.ctx, cn.cancel = context.WithCancel(context.Background())
	nc, err := dial(ctx, c.cfg.URL, append([]nats.Option{nats.Name(c.cfg.Name)}, c.cfg.Options...), func(err error) {
		cn.Lose(err)
		cn.cancel()
	})
	if err == nil {
		cn.nc = nc
		if err = cn.declare(ctx); err != nil {
			nc.Close()
		}
	}
	if err != nil {
		cn.cancel()
		return nil, err
	}
	cn.leasing.Go(func() { cn.leases.Run(cn.ctx) })
	return cn, nil
}

func (cn *conn[K, E]) declare(ctx context.Context) error {
	cfg := cn.c.cfg
	var err error
	if cn.js, err = jetstream.New(cn.nc); err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	if cn.stream, err = declare(ctx, cn.js, cfg.Topology); err != nil {
		return err
	}
	for _, p := range cfg.Partitions {
		if _, err := cn.stream.CreateOrUpdateConsumer(ctx, cfg.consumerConfig(p)); err != nil { // the last process to start sets AckWait and the like
			return fmt.Errorf("nats: declare consumer %s: %w", cfg.Topology.ConsumerName(p), err)
		}
	}
	lose := func(h *held[K, E], cause error) { h.f.Lose(cause) }
	cn.leases, err = transport.NewLeases(transport.LeaseConfig[*held[K, E]]{
		System: "nats", Lease: cfg.AckWait, Batch: 64, Extend: cn.extend, Logger: cfg.Logger, Lost: lose, Lapsed: lose,
		Name: func(h *held[K, E]) string { return "message " + strconv.FormatUint(h.seq, 10) + " of " + h.f.name },
	})
	return err
}

// extend sends an in-progress ack for each message as a request: the
// server's answer confirms that it reset the message's AckWait.
func (cn *conn[K, E]) extend(ctx context.Context, hs []*held[K, E], _ time.Duration) (map[*held[K, E]]string, error) {
	errs := make(chan error, len(hs))
	for _, h := range hs {
		go func() {
			_, err := cn.nc.RequestWithContext(ctx, h.msg.Reply(), []byte("+WPI"))
			errs <- err
		}()
	}
	var first error
	for range hs {
		first = cmp.Or(first, <-errs)
	}
	return nil, first
}

// Close flushes what was sent, then closes; Kill closes at once.
func (cn *conn[K, E]) Close() {
	_ = cn.nc.FlushTimeout(cn.c.cfg.DrainTimeout)
	cn.Kill()
}

func (cn *conn[K, E]) Kill() {
	cn.cancel()
	cn.nc.Close()
	cn.leasing.Wait()
}
