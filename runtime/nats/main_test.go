package nats_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/goleak"
)

// serverURL is the URL of the server the tests start in their process, or
// that a parent test process gave a child (childEnv).
var serverURL string

func TestMain(m *testing.M) {
	if url := os.Getenv(childEnv); url != "" {
		serverURL = url
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "ordergen-nats-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := startServer(dir, -1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverURL = s.ClientURL()
	code := m.Run()
	s.Shutdown()
	s.WaitForShutdown()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// startServer starts a JetStream server in the process, storing in dir, on
// port (-1: any free one).
func startServer(dir string, port int) (*server.Server, error) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true,
		// A client cut off is noticed within seconds, not minutes.
		PingInterval: 500 * time.Millisecond, MaxPingsOut: 2})
	if err != nil {
		return nil, err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("the NATS server did not start")
	}
	return s, nil
}
