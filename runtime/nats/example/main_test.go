package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/examples/brokerdemo"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's verdict holds: after one consumer is killed mid-stream, the
// balances equal in-order application.
func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, brokerdemo.Config{Accounts: 30, Events: 8, Seed: 3, Slow: time.Millisecond}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "verdict    OK") {
		t.Fatalf("no OK verdict:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
