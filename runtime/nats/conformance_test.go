package nats_test

import (
	"context"
	"flag"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	ogn "github.com/ordergen/ordergen/runtime/nats"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// lease is the AckWait of the tests' consumers; pinnedTTL how long a
// crashed consumer keeps its partitions pinned.
const (
	lease     = 2 * time.Second
	pinnedTTL = 2 * time.Second
)

// TestConformance runs the transport conformance suite against the
// server started in the test process.
func TestConformance(t *testing.T) { transporttest.Run(t, harness()) }

var stressFor = flag.Duration("nats.stress", 3*time.Second, "how long TestConformanceStress injects faults (run long with e.g. -nats.stress=10m)")

// TestConformanceStress kills, closes, parks and replays at random, and
// cuts and stalls the consumers' networks (see transporttest.Stress):
// nothing is lost or reordered, every stop returns, and no handler of a
// key begins while another runs with a live context (the in-progress acks
// are requests the server answers).
func TestConformanceStress(t *testing.T) {
	transporttest.Stress(t, harness(), transporttest.StressOptions{Duration: *stressFor, NetFaults: true})
}

func harness() transporttest.Harness {
	return transporttest.Harness{
		NewStream: func(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
			return newStream(t, ogn.Topology{Name: spec.Name, Partitions: max(spec.Units, 1)})
		},
		Lease: lease,
		ParkBlocked: func(m metricstest.Metrics) bool {
			v, _ := m.Sum("ordergen.nats.blocked", meter.Attribute{Key: "ordergen.nats.blocked.reason", Value: "parked"})
			return v > 0
		},
	}
}

// stream is a topology on the test server.
type stream struct {
	topo ogn.Topology
	nc   *nats.Conn
	js   jetstream.JetStream
	read uint64 // the dead letters read
}

func newStream(t *testing.T, topo ogn.Topology) *stream {
	t.Helper()
	nc := dial(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ogn.NewProducer[string, transporttest.Event](ogn.ProducerConfig[transporttest.Event]{URL: serverURL, Topology: topo, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, topo.Name)
		_ = js.DeleteStream(ctx, topo.DeadLetterStream())
	})
	return &stream{topo: topo, nc: nc, js: js}
}

func (s *stream) Producer(t *testing.T, o transporttest.ProducerOptions) transport.Sink[string, transporttest.Event] {
	cfg := ogn.ProducerConfig[transporttest.Event]{URL: serverURL, Topology: s.topo, Codec: transporttest.Codec{}}
	if o.Net != nil {
		cfg.Options = []nats.Option{nats.SetCustomDialer(&dialer{n: o.Net})}
	}
	p, err := ogn.NewProducer[string, transporttest.Event](cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func (s *stream) PublishPoison(ctx context.Context, key string, body []byte) error {
	msg := nats.NewMsg(s.topo.SubjectOf(key))
	msg.Header.Set(transport.HeaderKey, key)
	msg.Header.Set(transport.HeaderType, transporttest.EventType)
	msg.Data = body
	_, err := s.js.PublishMsg(ctx, msg)
	return err
}

func (s *stream) DeadLetterSink(t *testing.T) runtime.DeadLetterSink[string, transporttest.Event] {
	p, err := ogn.NewProducer[string, transporttest.Event](ogn.ProducerConfig[transporttest.Event]{URL: serverURL, Topology: s.topo, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return ogn.DeadLetters(p)
}

func (s *stream) DeadLetters(ctx context.Context) ([]transporttest.DeadLetter, error) {
	st, err := s.js.Stream(ctx, s.topo.DeadLetterStream())
	if err != nil {
		return nil, err
	}
	for {
		info, err := st.Info(ctx)
		if err != nil {
			return nil, err
		}
		var out []transporttest.DeadLetter
		for ; s.read < info.State.LastSeq; s.read++ {
			m, err := st.GetMsg(ctx, s.read+1)
			if err != nil {
				return out, err
			}
			out = append(out, transporttest.DeadLetter{Key: m.Header.Get(transport.HeaderKey), Body: m.Data, Reason: m.Header.Get(transport.HeaderReason)})
		}
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *stream) Consumer(t *testing.T, o transporttest.ConsumerOptions) transporttest.Consumer {
	d := &dialer{n: o.Net}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	room := 0
	if o.MaxInFlight > 0 {
		room = max(1, o.MaxInFlight/s.topo.Partitions)
	}
	c, err := ogn.NewConsumer[string, transporttest.Event](ogn.Config[transporttest.Event]{
		URL: serverURL, Options: []nats.Option{nats.SetCustomDialer(d)}, Topology: s.topo, Codec: transporttest.Codec{},
		AckWait: lease, PinnedTTL: pinnedTTL, MaxAckPending: room, DrainTimeout: 5 * time.Second,
		ReconnectDelay: 20 * time.Millisecond, MaxReconnectDelay: time.Second,
		Name: o.Name, Logger: logger, MeterProvider: o.MeterProvider,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &killable{Consumer: transporttest.KillOnCancel(c), d: d}
}

// killable kills a consumer by cutting its TCP connections first, so that
// it sends nothing more, then ending its Run.
type killable struct {
	transporttest.Consumer
	d *dialer
}

func (k *killable) Kill() {
	k.d.cut()
	k.Consumer.Kill()
}

// dialer dials through a netfault.Net when it has one, and keeps the
// connections it made so that a test can cut them.
type dialer struct {
	n     *netfault.Net
	mu    sync.Mutex
	conns []net.Conn
}

func (d *dialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var c net.Conn
	var err error
	if d.n != nil {
		c, err = d.n.DialContext(ctx, network, addr)
	} else {
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
	}
	return c, err
}

func (d *dialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.conns = nil
}

// dial connects to the test server; the connection closes with the test.
func dial(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
