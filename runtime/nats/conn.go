package nats

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
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
	done           chan struct{} // the leases stopped
	transport.Loss               // when nc closed
}

// connect dials, declares the streams and the partitions' consumers,
// starts the leases and listens for the messages the server gave up on.
func connect[K comparable, E transport.Keyed[K]](ctx context.Context, c *Consumer[K, E]) (*conn[K, E], error) {
	cn := &conn[K, E]{c: c, done: make(chan struct{})}
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
	go func() {
		defer close(cn.done)
		cn.leases.Run(cn.ctx)
	}()
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
	advisories := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + cfg.Topology.Name + ".*"
	if _, err := cn.nc.QueueSubscribe(advisories, "ordergen."+cfg.Topology.Name, cn.maxDelivered); err != nil {
		return fmt.Errorf("nats: subscribe to %s: %w", advisories, err)
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

// maxDelivered copies a message the server gave up on after MaxDeliver
// deliveries to the dead-letter stream. One consumer of the queue group
// gets the advisory; the message ID lets the server drop a second copy.
func (cn *conn[K, E]) maxDelivered(m *nats.Msg) {
	var adv struct {
		Seq        uint64 `json:"stream_seq"`
		Deliveries uint64 `json:"deliveries"`
	}
	t, log := cn.c.cfg.Topology, cn.c.cfg.Logger
	err := json.Unmarshal(m.Data, &adv)
	ctx, cancel := context.WithTimeout(cn.ctx, cn.c.cfg.DrainTimeout)
	defer cancel()
	var raw *jetstream.RawStreamMsg
	if err == nil {
		raw, err = cn.stream.GetMsg(ctx, adv.Seq)
	}
	if err == nil {
		err = publishDead(ctx, cn.js, t, raw.Header, raw.Data, raw.Header.Get(transport.HeaderKey), transport.ReasonMaxDeliveries,
			fmt.Errorf("delivered %d times (MaxDeliver)", adv.Deliveries), 0, t.Name+"-"+strconv.FormatUint(adv.Seq, 10))
	}
	if err != nil {
		log.Error("ordergen/nats: a message the server gave up on (MaxDeliver) was not dead-lettered", "stream", t.Name, "seq", adv.Seq, "error", err)
		return
	}
	log.Warn("ordergen/nats: message dead-lettered after MaxDeliver deliveries", "stream", t.Name, "seq", adv.Seq, "deliveries", adv.Deliveries)
}

// Close flushes what was sent, then closes; Kill closes at once.
func (cn *conn[K, E]) Close() {
	_ = cn.nc.FlushTimeout(cn.c.cfg.DrainTimeout)
	cn.Kill()
}

func (cn *conn[K, E]) Kill() {
	cn.cancel()
	cn.nc.Close()
	<-cn.done
}
