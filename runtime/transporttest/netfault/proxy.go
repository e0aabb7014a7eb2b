package netfault

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds the proxy's connection to a server.
const dialTimeout = 10 * time.Second

// proxy forwards the connections made to ln to target.
type proxy struct {
	target string
	ln     net.Listener
}

// link is one connection through a proxy: the client's end (accepted) and
// the server's (dialled), with a pump each way.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed by close
	n              *Net
	pumps          int // pumps still running; guarded by n.mu
}

// proxy returns the proxy to target, started on first use.
func (n *Net) proxy(target string) (*proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	if p := n.proxies[target]; p != nil {
		return p, nil
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("netfault: proxy to %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: proxy to %s: %w", target, err)
	}
	p := &proxy{target: target, ln: ln}
	n.proxies[target] = p
	n.wg.Add(1)
	go n.accept(p)
	return p, nil
}

// accept forwards the connections made to p until its listener closes.
func (n *Net) accept(p *proxy) {
	defer n.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed by Close
		}
		n.mu.Lock()
		state, closed := n.state, n.closed
		if state == Cut && !closed {
			n.stats.Refused++
			n.notify()
		}
		n.mu.Unlock()
		if closed || state == Cut {
			reset(c)
			continue
		}
		n.wg.Add(1)
		go n.connect(p, c)
	}
}

// connect dials p's server for the client c and starts the pumps.
func (n *Net) connect(p *proxy, c net.Conn) {
	defer n.wg.Done()
	s, err := net.DialTimeout("tcp", p.target, dialTimeout)
	if err != nil {
		reset(c) // as the server would refuse it
		return
	}
	l := &link{client: c, server: s, done: make(chan struct{}), n: n}
	n.mu.Lock()
	if n.closed || n.state == Cut { // cut while dialling: this one dies too
		if !n.closed {
			n.stats.Killed++
			n.notify()
		}
		n.mu.Unlock()
		reset(c)
		reset(s)
		return
	}
	n.links[l] = struct{}{}
	l.pumps = 2
	n.stats.Accepted++
	n.stats.Open++
	n.notify()
	n.wg.Add(2)
	n.mu.Unlock()
	go n.pump(l, s, c, true)
	go n.pump(l, c, s, false)
}

// pump copies src to dst, holding each chunk while the Net is stalled. At
// src's end it half-closes dst, as the peer did; the link closes when both
// pumps ended, or at once on an error.
func (n *Net) pump(l *link, dst, src net.Conn, up bool) {
	defer n.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if !n.gate(l, up, k) {
				return
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				l.close(false)
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.close(false)
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			n.mu.Lock()
			l.pumps--
			last := l.pumps == 0
			n.mu.Unlock()
			if last {
				l.close(false)
			}
			return
		}
	}
}

// gate waits while the Net is stalled, then counts the k bytes as
// forwarded (before they are written, so that a peer that read them finds
// them counted). It reports false when the link is closed or about to be
// (a cut, an error, Close): the bytes are dropped.
func (n *Net) gate(l *link, up bool, k int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for n.state == Stalled && !n.closed {
		resumed := n.resumed
		n.stats.Held++
		n.notify()
		n.mu.Unlock()
		select {
		case <-resumed:
		case <-l.done:
		}
		n.mu.Lock()
		n.stats.Held--
		n.notify()
	}
	select {
	case <-l.done:
		return false
	default:
	}
	if n.state == Cut || n.closed {
		return false // Cut kills every link: this one's turn is coming
	}
	if up {
		n.stats.Sent += int64(k)
	} else {
		n.stats.Received += int64(k)
	}
	n.notify()
	return true
}

// close closes both ends of l once; with rst they are reset rather than
// closed in order (a cut).
func (l *link) close(rst bool) {
	l.once.Do(func() {
		n := l.n
		n.mu.Lock()
		delete(n.links, l)
		n.stats.Open--
		n.notify()
		n.mu.Unlock()
		close(l.done)
		if rst {
			reset(l.client)
			reset(l.server)
			return
		}
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

// reset closes c with a TCP reset rather than an orderly close, as a
// connection killed in the network looks to its peers.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
