package transport

import (
	"context"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/runtime"
)

// ConnWriter is the Writer of a broker whose client sends asynchronously on
// a connection it may lose (NATS JetStream's async publishes): it owns the
// connection, dialling it on the first write and again on the first write
// after a loss, and keeps the sends that wait for the broker's answer.
// When a connection is lost it fails the sends waiting on it and records
// their keys (FailedKeys) before another connection can open, so that no
// later send of such a key goes out on the next connection ahead of the
// failed one; OrderedSink.Resume lets the key go on. Every send's done is
// called exactly once: answers that come after a loss or Close are
// dropped.
//
// It is a ResumingWriter and a ClosingWriter: give it to NewOrderedSink.
// An adapter writes Dial, Encode, Send and Close (ConnConfig), and tells
// the writer of the broker's answers (Answer) and of the loss of the
// connection (the lost func Dial gets).
type ConnWriter[K comparable, E any, C any, T comparable] struct {
	cfg    ConnConfig[K, E, C, T]
	failed FailedKeys[K]
	dialMu sync.Mutex // one dial at a time

	// mu guards what follows; no callback runs under it.
	mu      sync.Mutex
	cur     *connGen[C] // the open connection, nil before a dial and after a loss
	waiting map[T]waitingSend[K, C]
	closed  bool
}

// ConnConfig is what a broker adapter writes for a ConnWriter: C is its
// connection, T a send's token (the message the client's answer names).
type ConnConfig[K comparable, E any, C any, T comparable] struct {
	// System names the broker in errors ("nats").
	System string
	// Dial opens a connection. The adapter calls lost, once or more, when
	// that connection closes (the client's close callback), with why.
	// ctx is the write's. Required.
	Dial func(ctx context.Context, lost func(error)) (C, error)
	// Encode makes the message of event: its token, unique among the sends
	// waiting. Nothing is sent yet. Required.
	Encode func(ctx context.Context, key K, event E) (T, error)
	// Send sends t on c without waiting; the answer comes through Answer.
	// An error means that t was not sent. Required.
	Send func(c C, t T) error
	// Close closes c. Required.
	Close func(c C)
}

// connGen is one connection, from its dial to its loss.
type connGen[C any] struct {
	c    C
	lost bool  // guarded by the writer's mu
	err  error // why
}

type waitingSend[K comparable, C any] struct {
	key  K
	on   *connGen[C]
	done func(error)
}

var _ ResumingWriter[string, any] = (*ConnWriter[string, any, any, int])(nil)
var _ ClosingWriter[string, any] = (*ConnWriter[string, any, any, int])(nil)

// NewConnWriter returns a writer over cfg; it dials on the first write. It
// refuses a key type that KeyText cannot write.
func NewConnWriter[K comparable, E any, C any, T comparable](cfg ConnConfig[K, E, C, T]) (*ConnWriter[K, E, C, T], error) {
	if cfg.Dial == nil || cfg.Encode == nil || cfg.Send == nil || cfg.Close == nil {
		return nil, fmt.Errorf("%w: a connection writer needs Dial, Encode, Send and Close", runtime.ErrInvalidConfig)
	}
	if _, err := KeyText(*new(K)); err != nil { // keys go on the wire as text
		return nil, err
	}
	return &ConnWriter[K, E, C, T]{cfg: cfg, waiting: map[T]waitingSend[K, C]{}}, nil
}

// Conn returns the open connection, dialling when there is none; after
// Close it fails with an error wrapping runtime.ErrClosed.
func (w *ConnWriter[K, E, C, T]) Conn(ctx context.Context) (C, error) {
	g, err := w.conn(ctx)
	if err != nil {
		var zero C
		return zero, err
	}
	return g.c, nil
}

func (w *ConnWriter[K, E, C, T]) conn(ctx context.Context) (*connGen[C], error) {
	w.dialMu.Lock()
	defer w.dialMu.Unlock()
	w.mu.Lock()
	g, closed := w.cur, w.closed
	w.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%s: %w", w.cfg.System, runtime.ErrClosed)
	}
	if g != nil {
		return g, nil
	}
	g = &connGen[C]{}
	c, err := w.cfg.Dial(ctx, func(err error) { w.lose(g, err) })
	if err != nil {
		return nil, fmt.Errorf("%s: dial: %w", w.cfg.System, err)
	}
	w.mu.Lock()
	g.c = c
	switch {
	case w.closed:
		err = fmt.Errorf("%s: %w", w.cfg.System, runtime.ErrClosed)
	case g.lost:
		err = fmt.Errorf("%s: the connection closed as it opened: %w", w.cfg.System, g.err)
	default:
		w.cur = g
	}
	w.mu.Unlock()
	if err != nil {
		w.cfg.Close(c)
		return nil, err
	}
	return g, nil
}

// Write encodes event and sends it on the open connection; done gets the
// broker's answer, or the failure of the connection it waited on.
func (w *ConnWriter[K, E, C, T]) Write(ctx context.Context, key K, event E, done func(error)) {
	t, err := w.cfg.Encode(ctx, key, event)
	if err != nil {
		done(err) // nothing was sent: the key's order is whole
		return
	}
	g, err := w.conn(ctx)
	w.mu.Lock()
	if err == nil {
		err = w.failed.Err(key) // again: a failure may have come meanwhile
	}
	if err == nil && g.lost {
		err = fmt.Errorf("%s: the connection closed: %w", w.cfg.System, g.err)
	}
	if err == nil {
		w.waiting[t] = waitingSend[K, C]{key, g, done}
	} else {
		w.failed.Fail(key, err)
	}
	w.mu.Unlock()
	if err != nil {
		done(fmt.Errorf("%s: send of key %v: %w", w.cfg.System, key, err))
	} else if err := w.cfg.Send(g.c, t); err != nil {
		w.Answer(t, err)
	}
}

// Answer tells the writer the broker's answer to the send of t (nil: the
// broker took it). Answers to sends already failed are dropped.
func (w *ConnWriter[K, E, C, T]) Answer(t T, err error) {
	w.mu.Lock()
	s, ok := w.waiting[t]
	delete(w.waiting, t)
	if ok && err != nil {
		w.failed.Fail(s.key, err)
		err = fmt.Errorf("%s: send of key %v: %w", w.cfg.System, s.key, err)
	}
	w.mu.Unlock()
	if ok {
		s.done(err)
	}
}

// lose fails the sends waiting on g, recording their keys, and forgets g.
func (w *ConnWriter[K, E, C, T]) lose(g *connGen[C], cause error) {
	w.mu.Lock()
	if g.lost {
		w.mu.Unlock()
		return
	}
	g.lost, g.err = true, cause
	if w.cur == g {
		w.cur = nil
	}
	failed := w.failWaiting(g, fmt.Errorf("the connection closed: %w", cause))
	w.mu.Unlock()
	failed()
}

// failWaiting fails the sends waiting on g (any, when g is nil) with err
// and records their keys; mu is held. It returns the calls of their done,
// to make once mu is released.
func (w *ConnWriter[K, E, C, T]) failWaiting(g *connGen[C], err error) func() {
	var dones []func()
	for t, s := range w.waiting {
		if g != nil && s.on != g {
			continue
		}
		delete(w.waiting, t)
		w.failed.Fail(s.key, err)
		e := fmt.Errorf("%s: send of key %v: %w", w.cfg.System, s.key, err)
		dones = append(dones, func() { s.done(e) })
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

// Resume lets key's writes through again (OrderedSink.Resume calls it).
func (w *ConnWriter[K, E, C, T]) Resume(key K) { w.failed.Resume(key) }

// Close fails the sends still waiting and closes the connection; later
// writes fail with an error wrapping runtime.ErrClosed.
func (w *ConnWriter[K, E, C, T]) Close(context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	g := w.cur
	w.cur = nil
	failed := w.failWaiting(nil, runtime.ErrClosed)
	w.mu.Unlock()
	failed()
	if g != nil {
		w.cfg.Close(g.c)
	}
	return nil
}
