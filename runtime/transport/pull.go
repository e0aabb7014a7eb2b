package transport

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// Pull is the receiving half of a UnitFeed for a broker whose client
// pushes a unit's deliveries from its own goroutine (a callback) and takes
// one acknowledgement per message (NATS JetStream): one goroutine of the
// Pull's takes each delivery, passes its message on to Deliveries in
// order, and sends the acknowledgements that Settled queued, because
// Settled runs under the intake's locks and must not wait for the network.
// It keeps the messages held (taken, not settled) by their sequence in the
// unit: a delivery of a message held means that the broker lent it to
// someone else (its lease lapsed), and loses the unit.
//
// A Gate, when set, holds the first deliveries back until it opens, then
// lets them through in sequence order, and the rest as they come: a new
// holder of a unit waits there until the last holder's messages came
// back, which would otherwise come after their keys' later ones.
//
// Embedding a Pull gives a UnitFeed its Deliveries, Lost and Err.
type Pull[D any, M any] struct {
	Loss
	cfg  PullConfig[D, M]
	in   chan D        // from Push
	out  chan M        // to the intake, in order
	stop chan struct{} // closed by Stop
	ran  chan struct{} // run returned
	wake chan struct{} // acknowledgements to send

	// mu guards what follows; Settled takes it under the intake's locks.
	mu   sync.Mutex
	held map[uint64]M
	acks []M
}

// PullConfig is what an adapter writes for a Pull: D is the client's
// delivery, M the intake's handle of its message.
type PullConfig[D any, M any] struct {
	// Name names the unit in errors ("nats: ledger-3").
	Name string
	// Buffer bounds the deliveries pushed and not yet taken (the broker's
	// room and a fetch's batch): Push waits beyond it. Required.
	Buffer int
	// Check returns a delivery's sequence in the unit, or an error that
	// loses the unit (a delivery under another holder's pin). Required.
	Check func(D) (seq uint64, err error)
	// Take makes the message of a delivery that Check passed (and starts
	// its lease). Required.
	Take func(d D, seq uint64) M
	// Ack sends m's acknowledgement, on the Pull's goroutine. Required.
	Ack func(m M)
	// Gate, when set, is asked whether the first deliveries may go, with
	// how many messages are held: after each delivery and every GatePoll
	// (zero: 100ms) until it says yes.
	Gate     func(held int) bool
	GatePoll time.Duration
}

// pulled is a gated message and its sequence.
type pulled[M any] struct {
	m   M
	seq uint64
}

// NewPull starts a pull over cfg; Stop ends it.
func NewPull[D any, M any](cfg PullConfig[D, M]) (*Pull[D, M], error) {
	if cfg.Buffer <= 0 || cfg.Check == nil || cfg.Take == nil || cfg.Ack == nil {
		return nil, fmt.Errorf("%w: a pull needs a Buffer, Check, Take and Ack", runtime.ErrInvalidConfig)
	}
	cfg.GatePoll = cmp.Or(cfg.GatePoll, 100*time.Millisecond)
	p := &Pull[D, M]{cfg: cfg, in: make(chan D, cfg.Buffer), out: make(chan M), stop: make(chan struct{}),
		ran: make(chan struct{}), wake: make(chan struct{}, 1), held: map[uint64]M{}}
	go p.run()
	return p, nil
}

// Push hands the pull a delivery: the client's callback calls it, in the
// unit's order. It waits while Buffer deliveries wait, and drops d once
// the pull stopped (the broker delivers it again).
func (p *Pull[D, M]) Push(d D) {
	select {
	case p.in <- d:
	case <-p.stop:
	}
}

// Deliveries are the unit's messages, in order, past the gate; closed
// when the pull stops or the unit is lost.
func (p *Pull[D, M]) Deliveries() <-chan M { return p.out }

// Settled queues the acknowledgement of the held message of sequence seq
// and forgets it; it runs under the intake's locks.
func (p *Pull[D, M]) Settled(seq uint64) {
	p.mu.Lock()
	m, ok := p.held[seq]
	if ok {
		delete(p.held, seq)
		p.acks = append(p.acks, m)
	}
	p.mu.Unlock()
	if ok {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// run takes the deliveries and passes them on, once the gate is open, and
// sends the acknowledgements, until Stop or a loss.
func (p *Pull[D, M]) run() {
	defer close(p.ran)
	defer close(p.out)
	var gated []pulled[M]
	var tick <-chan time.Time
	if p.cfg.Gate != nil {
		t := time.NewTicker(p.cfg.GatePoll)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-p.stop:
			return
		case <-p.Lost():
			return
		case <-p.wake:
			p.sendAcks()
		case d := <-p.in:
			m, seq, err := p.take(d)
			if err != nil {
				p.Lose(err)
				return
			}
			if tick != nil {
				gated = append(gated, pulled[M]{m, seq})
			} else if !p.send(m) {
				return
			}
		case <-tick:
		}
		if tick != nil && len(gated) > 0 && p.cfg.Gate(p.heldCount()) {
			tick = nil
			slices.SortFunc(gated, func(a, b pulled[M]) int { return cmp.Compare(a.seq, b.seq) })
			for _, g := range gated {
				if !p.send(g.m) {
					return
				}
			}
			gated = nil
		}
	}
}

// take checks and records a delivery.
func (p *Pull[D, M]) take(d D) (m M, seq uint64, err error) {
	if seq, err = p.cfg.Check(d); err != nil {
		return m, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.held[seq]; ok {
		return m, 0, fmt.Errorf("%s: message %d delivered again while held: its lease lapsed", p.cfg.Name, seq)
	}
	m = p.cfg.Take(d, seq)
	p.held[seq] = m
	return m, seq, nil
}

func (p *Pull[D, M]) heldCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}

// send passes m on, sending acknowledgements meanwhile.
func (p *Pull[D, M]) send(m M) bool {
	for {
		select {
		case p.out <- m:
			return true
		case <-p.wake:
			p.sendAcks()
		case <-p.stop:
			return false
		case <-p.Lost():
			return false
		}
	}
}

func (p *Pull[D, M]) sendAcks() {
	p.mu.Lock()
	acks := p.acks
	p.acks = nil
	p.mu.Unlock()
	for _, m := range acks {
		p.cfg.Ack(m)
	}
}

// Stop ends the pull (once its stream ended) and returns the messages
// still held, in sequence order, for the adapter to give back or leave to
// their leases. halt, when set, runs once Push no longer waits and before
// the pull's goroutine is waited for: it stops the client's callbacks.
// With flush (a clean close) the acknowledgements queued are sent and the
// deliveries pushed and not taken are taken, to be given back with the
// rest; without, nothing more is sent.
func (p *Pull[D, M]) Stop(flush bool, halt func()) []M {
	close(p.stop)
	if halt != nil {
		halt()
	}
	<-p.ran
	if flush {
		p.sendAcks()
		for len(p.in) > 0 {
			_, _, _ = p.take(<-p.in)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seqs := make([]uint64, 0, len(p.held))
	for seq := range p.held {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	rest := make([]M, len(seqs))
	for i, seq := range seqs {
		rest[i] = p.held[seq]
	}
	clear(p.held)
	return rest
}
