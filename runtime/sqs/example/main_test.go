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
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// The example's verdict holds: after one consumer is killed mid-stream, the
// balances equal in-order application.
func TestExample(t *testing.T) {
	ep := os.Getenv("ORDERGEN_TEST_SQS")
	if ep == "" {
		t.Skip("ORDERGEN_TEST_SQS is not set: no SQS endpoint to run the example against (.ci/fauxqs start DIR prints one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, ep, brokerdemo.Config{Accounts: 30, Events: 8, Seed: 3, Slow: time.Millisecond}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "verdict    OK") {
		t.Fatalf("no OK verdict:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
