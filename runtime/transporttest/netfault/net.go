package netfault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// ErrClosed is returned by Proxy and DialContext after Close.
var ErrClosed = errors.New("netfault: the net is closed")

// State is what a Net does with the bytes and connections that pass it.
type State int

const (
	// Up: bytes and new connections pass.
	Up State = iota
	// Stalled: connections stay open, every byte is held until Resume.
	Stalled
	// Cut: the connections were killed; new ones are refused until Resume.
	Cut
)

var stateNames = [...]string{Up: "up", Stalled: "stalled", Cut: "cut"}

// String returns the state's name.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Stats are a Net's figures: its state and what its proxies did since the
// Net was made.
type Stats struct {
	// State is the Net's state now.
	State State
	// Accepted counts the connections forwarded to their server; Open of
	// them are open now.
	Accepted, Open int
	// Refused counts the connections refused while the Net was cut: each
	// is a client that tried to reach its server again.
	Refused int
	// Killed counts the connections that Cut killed.
	Killed int
	// Sent and Received count the bytes forwarded from clients to servers
	// and back.
	Sent, Received int64
	// Held is the number of chunks of bytes held now by a stall (at most
	// one per connection and direction; the rest waits in the sockets).
	Held int
}

// Net is a network between clients and servers that a test controls. The
// zero value is not usable: make one with New, and Close it.
type Net struct {
	// mu guards every field below, and the links' fields that say so.
	mu      sync.Mutex
	state   State
	stats   Stats
	closed  bool
	proxies map[string]*proxy // by the server's address
	links   map[*link]struct{}
	// changed is closed, and replaced, whenever stats or state change, so
	// that Await looks again.
	changed chan struct{}
	// resumed is closed when a stall ends (Resume, Cut, Close); pumps
	// holding bytes wait for it.
	resumed chan struct{}
	wg      sync.WaitGroup // accept loops and pumps
}

// New returns a Net that is up and has no proxies yet.
func New() *Net {
	return &Net{
		proxies: make(map[string]*proxy),
		links:   make(map[*link]struct{}),
		changed: make(chan struct{}),
		resumed: make(chan struct{}),
	}
}

// Proxy returns the address of the Net's proxy to target (host:port),
// starting it on first use: a client connects there instead of to target.
// It listens on 127.0.0.1.
func (n *Net) Proxy(target string) (string, error) {
	p, err := n.proxy(target)
	if err != nil {
		return "", err
	}
	return p.ln.Addr().String(), nil
}

// DialContext connects to addr (a TCP host:port) through the Net's proxy
// to it. It has the signature of net.Dialer.DialContext, for clients that
// take a dialer (so that addresses a server advertises, such as a Kafka
// broker's, pass the Net too).
func (n *Net) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("netfault: dial %s %s: only TCP passes a Net", network, addr)
	}
	p, err := n.proxy(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", p.ln.Addr().String())
}

// Cut kills every connection open through the Net, resetting both of its
// ends, and refuses new connections until Resume.
func (n *Net) Cut() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.setState(Cut)
	links := make([]*link, 0, len(n.links))
	for l := range n.links {
		links = append(links, l)
	}
	n.stats.Killed += len(links)
	n.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
}

// Stall holds every byte sent through the Net, either way and on new
// connections too, until Resume; connections stay open.
func (n *Net) Stall() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.state == Stalled {
		return
	}
	n.setState(Stalled)
}

// Resume lets bytes through again (those a stall held go on, in order)
// and accepts new connections again after a cut.
func (n *Net) Resume() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.setState(Up)
}

// setState moves the Net to s, waking the pumps a stall held when it
// ends; n.mu is held.
func (n *Net) setState(s State) {
	if n.state == Stalled && s != Stalled {
		close(n.resumed)
		n.resumed = make(chan struct{})
	}
	n.state = s
	n.notify()
}

// Stats returns the Net's figures now.
func (n *Net) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.stats
	s.State = n.state
	return s
}

// Await returns once cond holds for the Net's figures, looking again at
// each change, or ctx's error (with the figures) when ctx ends first.
func (n *Net) Await(ctx context.Context, cond func(Stats) bool) error {
	for {
		n.mu.Lock()
		s := n.stats
		s.State = n.state
		ch := n.changed
		n.mu.Unlock()
		if cond(s) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("netfault: %w while waiting (figures %+v)", ctx.Err(), s)
		}
	}
}

// notify wakes the Await calls; n.mu is held.
func (n *Net) notify() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// Close stops the proxies and closes every connection through them; it
// returns once the Net's goroutines are gone.
func (n *Net) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		n.wg.Wait()
		return nil
	}
	n.closed = true
	if n.state == Stalled {
		close(n.resumed) // release the held pumps; their links close below
	}
	var errs []error
	for _, p := range n.proxies {
		if err := p.ln.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	links := make([]*link, 0, len(n.links))
	for l := range n.links {
		links = append(links, l)
	}
	n.notify()
	n.mu.Unlock()
	for _, l := range links {
		l.close(false)
	}
	n.wg.Wait()
	return errors.Join(errs...)
}
