package nats_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	ogn "github.com/ordergen/ordergen/runtime/nats"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// childEnv carries the server's URL to a child test process; topoEnv the
// topology it consumes.
const (
	childEnv = "ORDERGEN_NATS_CHILD"
	topoEnv  = "ORDERGEN_NATS_CHILD_TOPOLOGY"
)

// killTopology is the kill test's topology, named by the parent.
func killTopology(name string) ogn.Topology { return ogn.Topology{Name: name, Partitions: 4} }

// killAckWait is the kill test's AckWait: longer than the pins' TTL, so
// that the next process holds the partitions before the killed one's
// unacknowledged messages come again (the order the gate must restore).
const killAckWait = 3 * pinnedTTL

// startConsumer runs a consumer of topo whose handler is handle, until the
// returned stop is called (clean: drains and acknowledges).
func startConsumer(t testing.TB, topo ogn.Topology, name string, handle func(transporttest.Event) error) (stop func()) {
	c, err := ogn.NewConsumer[string, transporttest.Event](ogn.Config[transporttest.Event]{
		URL: serverURL, Topology: topo, Codec: transporttest.Codec{}, AckWait: killAckWait, PinnedTTL: pinnedTTL,
		Name: name, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.New(func(_ context.Context, _ string, ev transporttest.Event) error { return handle(ev) },
		runtime.Config[string, transporttest.Event]{Name: name, MaxActive: 16, OnOutcome: c.OnOutcome, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background(), transport.EngineTarget(e)) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("close consumer %s: %v", name, err)
		}
		if err := e.Close(ctx); err != nil {
			t.Errorf("close engine %s: %v", name, err)
		}
		<-done
	}
}

// TestKillChild is the child process of TestKillAcrossProcesses: it
// consumes the topology and prints each event it applies, until killed.
func TestKillChild(t *testing.T) {
	name := os.Getenv(topoEnv)
	if os.Getenv(childEnv) == "" || name == "" {
		t.Skip("the child of TestKillAcrossProcesses")
	}
	var mu sync.Mutex
	startConsumer(t, killTopology(name), "child", func(e transporttest.Event) error {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("applied %s %d\n", e.Key, e.Seq)
		time.Sleep(time.Millisecond) // work: the kill comes while events are in hand
		return nil
	})
	select {} // until the parent kills the process
}

// A consumer process killed (SIGKILL) mid-stream loses nothing: another
// process takes its partitions once its pins lapse and gets what it had
// not acknowledged again; every event is applied once, each key's in
// order, what the killed process applied and did not acknowledge skipped
// as a version guard would.
func TestKillAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child")
	}
	name := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	topo := killTopology(name)
	p, err := ogn.NewProducer[string, transporttest.Event](ogn.ProducerConfig[transporttest.Event]{URL: serverURL, Topology: topo, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close(context.Background()) }()
	const keys, perKey = 20, 40
	publish := func(from, to int) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for seq := from; seq <= to; seq++ {
			for k := range keys {
				if err := p.Send(ctx, "k"+strconv.Itoa(k), transporttest.Event{Key: "k" + strconv.Itoa(k), Seq: seq}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	publish(1, perKey/2)

	child := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.timeout=5m")
	child.Env = append(os.Environ(), childEnv+"="+serverURL, topoEnv+"="+name)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	applied := map[string]int{} // the last Seq applied per key, by either process
	var mu sync.Mutex
	var violations []string
	apply := func(who, key string, seq int) {
		mu.Lock()
		defer mu.Unlock()
		switch last := applied[key]; {
		case seq <= last: // applied before: the guard skips it
		case seq != last+1:
			violations = append(violations, fmt.Sprintf("%s: %s %d after %d", who, key, seq, last))
		default:
			applied[key] = seq
		}
	}
	lines, killAt := bufio.NewScanner(out), keys*perKey/4
	n := 0
	for lines.Scan() {
		var key string
		var seq int
		if _, err := fmt.Sscanf(lines.Text(), "applied %s %d", &key, &seq); err != nil {
			continue // the test framework's own output
		}
		apply("child", key, seq)
		if n++; n == killAt {
			_ = child.Process.Kill() // what it printed before stays in the pipe
		}
	}
	_ = child.Wait()
	if n < killAt {
		t.Fatalf("the child applied %d events before it ended, want at least %d", n, killAt)
	}

	all := make(chan struct{})
	var once sync.Once
	stop := startConsumer(t, topo, "parent", func(e transporttest.Event) error {
		apply("parent", e.Key, e.Seq)
		mu.Lock()
		defer mu.Unlock()
		if len(applied) == keys {
			done := true
			for _, last := range applied {
				done = done && last == perKey
			}
			if done {
				once.Do(func() { close(all) })
			}
		}
		return nil
	})
	publish(perKey/2+1, perKey)
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		t.Errorf("not every event was applied after the kill: %v", applied)
	}
	stop()
	if len(violations) > 0 {
		t.Errorf("events applied out of order: %s", strings.Join(violations, "; "))
	}
	t.Logf("the child applied %d events before and while it was killed; the parent the rest", n)
}
