package netfault_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo is a server that sends back every line it reads.
type echo struct {
	ln net.Listener
	wg sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func newEcho(t *testing.T) *echo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echo{ln: ln}
	e.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			_ = c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

func (e *echo) addr() string { return e.ln.Addr().String() }

// within returns a context that ends after d, or with the test.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newNet(t *testing.T) *netfault.Net {
	n := netfault.New()
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// connect dials addr through n; the connection closes when the test ends.
func connect(t *testing.T, ctx context.Context, n *netfault.Net, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := n.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

// roundTrip writes line and reads it back.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("read %q, %v; want %q", got, err, line)
	}
}

func TestForwardsBothWays(t *testing.T) {
	e := newEcho(t)
	n := newNet(t)
	c, err := n.DialContext(within(t, 10*time.Second), "tcp", e.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip(t, c, r, "hello")
	roundTrip(t, c, r, "again")
	s := n.Stats()
	if s.Accepted != 1 || s.Open != 1 || s.Sent != 12 || s.Received != 12 || s.State != netfault.Up {
		t.Errorf("figures %+v, want one connection, 12 bytes each way, up", s)
	}
	addr, err := n.Proxy(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	roundTrip(t, c2, bufio.NewReader(c2), "second")
	if s := n.Stats(); s.Accepted != 2 {
		t.Errorf("%d connections accepted, want 2 (Proxy and DialContext share the proxy)", s.Accepted)
	}
}

// Cut resets the connections open through the Net and refuses new ones
// until Resume; then new connections pass.
func TestCutKillsAndRefusesUntilResume(t *testing.T) {
	e := newEcho(t)
	n := newNet(t)
	ctx := within(t, 10*time.Second)
	c, r := connect(t, ctx, n, e.addr())
	roundTrip(t, c, r, "before")

	n.Cut()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a read on a cut connection succeeded")
	}
	if s := n.Stats(); s.Killed != 1 || s.Open != 0 || s.State != netfault.Cut {
		t.Errorf("figures %+v after Cut, want one killed, none open", s)
	}
	// A new connection is refused: accepted, then reset before any byte.
	c2, err := n.DialContext(ctx, "tcp", e.addr())
	if err == nil {
		defer c2.Close()
		_, _ = io.WriteString(c2, "x\n")
		if _, err := bufio.NewReader(c2).ReadString('\n'); err == nil {
			t.Fatal("a connection made while cut carried bytes")
		}
	}
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Refused == 1 }); err != nil {
		t.Fatal(err)
	}

	n.Resume()
	c3, r3 := connect(t, ctx, n, e.addr())
	roundTrip(t, c3, r3, "after")
}

// Stall holds the bytes, the connection stays open, and Resume delivers
// what was held, in order.
func TestStallHoldsBytesUntilResume(t *testing.T) {
	e := newEcho(t)
	n := newNet(t)
	ctx := within(t, 10*time.Second)
	c, r := connect(t, ctx, n, e.addr())
	roundTrip(t, c, r, "before")
	sent := n.Stats().Sent

	n.Stall()
	if _, err := io.WriteString(c, "held-1\nheld-2\n"); err != nil {
		t.Fatal(err)
	}
	// The pump read the bytes and holds them: nothing reached the server.
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Held == 1 }); err != nil {
		t.Fatal(err)
	}
	if s := n.Stats(); s.Sent != sent || s.Open != 1 || s.State != netfault.Stalled {
		t.Errorf("figures %+v while stalled, want %d bytes sent still, the connection open", s, sent)
	}
	// A connection made while stalled is accepted, and held too.
	c2, r2 := connect(t, ctx, n, e.addr())
	if _, err := io.WriteString(c2, "new\n"); err != nil {
		t.Fatal(err)
	}
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Held == 2 }); err != nil {
		t.Fatal(err)
	}

	n.Resume()
	for _, want := range []string{"held-1\n", "held-2\n"} {
		if got, err := r.ReadString('\n'); err != nil || got != want {
			t.Fatalf("after Resume read %q, %v; want %q", got, err, want)
		}
	}
	if got, err := r2.ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("the connection made while stalled read %q, %v", got, err)
	}
}

// A cut while stalled drops what was held and kills the connections.
func TestCutWhileStalled(t *testing.T) {
	e := newEcho(t)
	n := newNet(t)
	ctx := within(t, 10*time.Second)
	c, r := connect(t, ctx, n, e.addr())
	n.Stall()
	if _, err := io.WriteString(c, "lost\n"); err != nil {
		t.Fatal(err)
	}
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Held == 1 }); err != nil {
		t.Fatal(err)
	}
	n.Cut()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a read on a cut connection succeeded")
	}
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Held == 0 && s.Open == 0 }); err != nil {
		t.Fatal(err)
	}
	if s := n.Stats(); s.Sent != 0 {
		t.Errorf("%d bytes reached the server, want none", s.Sent)
	}
}

// Await gives up with ctx's error, and Close ends a Net's connections,
// even stalled ones; after it the Net refuses to proxy.
func TestAwaitAndClose(t *testing.T) {
	e := newEcho(t)
	n := netfault.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Await(ctx, func(s netfault.Stats) bool { return s.Accepted > 0 }); !errors.Is(err, context.Canceled) {
		t.Errorf("Await with an ended context returned %v", err)
	}
	c, err := n.DialContext(within(t, 10*time.Second), "tcp", e.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n.Stall()
	_, _ = io.WriteString(c, "x\n")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
		t.Error("a connection outlived Close")
	}
	if _, err := n.Proxy(e.addr()); !errors.Is(err, netfault.ErrClosed) {
		t.Errorf("Proxy after Close returned %v, want ErrClosed", err)
	}
	if _, err := n.DialContext(context.Background(), "udp", e.addr()); err == nil {
		t.Error("a UDP dial passed")
	}
}
