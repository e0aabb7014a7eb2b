package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The example's verdict holds against the server of
// ORDERGEN_TEST_RABBITMQ: after the active consumer is killed mid-stream,
// the balances equal in-order application.
func TestExample(t *testing.T) {
	url := os.Getenv("ORDERGEN_TEST_RABBITMQ")
	if url == "" {
		t.Skip("ORDERGEN_TEST_RABBITMQ is not set: no RabbitMQ server to run the example against (start one with .ci/rabbitmq start DIR and export its URL)")
	}
	if testing.Short() {
		t.Skip("runs the whole example against the server, seconds long (skipped under -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, url, brokerdemo.Config{Accounts: 60, Events: 20, Seed: 3, Slow: time.Millisecond}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "verdict    OK") {
		t.Fatalf("no OK verdict:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
