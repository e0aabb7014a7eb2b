package rabbitmq_test

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
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
