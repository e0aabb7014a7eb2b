package rabbitmq_test

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// brokerURL returns the test broker's URL, or skips t.
func brokerURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("ORDERGEN_TEST_RABBITMQ")
	if url == "" {
		t.Skip("ORDERGEN_TEST_RABBITMQ is not set: no RabbitMQ server to test against (start one with .ci/rabbitmq start DIR and export its URL)")
	}
	return url
}

// dial connects to the test broker; the connection closes when the test
// ends.
func dial(t *testing.T) *amqp.Connection {
	t.Helper()
	conn, err := amqp.Dial(brokerURL(t))
	if err != nil {
		t.Fatalf("dial %s: %v", brokerURL(t), err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// sockets keeps the TCP connections a consumer dials, so that a test can
// cut them as a crash would.
type sockets struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (s *sockets) dial(network, addr string) (net.Conn, error) {
	c, err := amqp.DefaultDial(30*time.Second)(network, addr)
	if err == nil {
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
	return c, err
}

// dialVia is dial through n (n nil: dial).
func (s *sockets) dialVia(n *netfault.Net) func(network, addr string) (net.Conn, error) {
	if n == nil {
		return s.dial
	}
	return func(network, addr string) (net.Conn, error) {
		c, err := netDial(n)(network, addr)
		if err == nil {
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
		return c, err
	}
}

// netDial is amqp.DefaultDial through n: the AMQP handshake gets 30
// seconds, as it does there (the client clears the deadline after it).
func netDial(n *netfault.Net) func(network, addr string) (net.Conn, error) {
	return func(network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := n.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			_ = c.Close()
			return nil, err
		}
		return c, nil
	}
}

// cut closes every connection dialled so far.
func (s *sockets) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// within returns a context that ends after d or with the test.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
