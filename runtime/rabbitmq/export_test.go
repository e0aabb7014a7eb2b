package rabbitmq

import (
	"context"
	"errors"
)

// Exported for the tests of package rabbitmq_test.

// Ledger exposes an acknowledgement ledger to the tests.
type Ledger struct{ l *ledger }

// Frame is one acknowledgement frame.
type Frame = frame

func NewLedger() *Ledger                         { return &Ledger{newLedger()} }
func (x *Ledger) Deliver(tag uint64)             { x.l.deliver(tag) }
func (x *Ledger) Settle(tag uint64, reject bool) { x.l.settle(tag, reject) }
func (x *Ledger) Take() []Frame                  { return x.l.take() }
func (x *Ledger) Unsettled() int                 { return x.l.unsettled() }
func (f Frame) Tag() uint64                      { return f.tag }
func (f Frame) Multiple() bool                   { return f.multiple }
func (f Frame) Reject() bool                     { return f.reject }

var Jump = jump

// NewWriter returns the write a Producer's OrderedSink drives, without the
// sink: a test can then write a key's event that the sink let through
// before its predecessor's failure was answered.
func NewWriter[K comparable, E any](cfg ProducerConfig[E]) (write func(ctx context.Context, key K, event E) error, resume func(K), closeIt func(), err error) {
	pub, topo, err := newPublisher[K](cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &writer[K, E]{pub: pub, topo: topo, codec: cfg.Codec}
	write = func(ctx context.Context, key K, event E) error {
		ch := make(chan error, 1)
		w.Write(ctx, key, event, func(err error) { ch <- err })
		return <-ch
	}
	return write, w.Resume, pub.close, nil
}

// NewRacingWriter is NewWriter whose write of key calls between(fail)
// after its first check of the key's failures and before it publishes:
// fail records a failed send of key, as a send that failed meanwhile on
// the channel would.
func NewRacingWriter[K comparable, E any](cfg ProducerConfig[E], between func(fail func(K))) (write func(ctx context.Context, key K, event E) error, closeIt func(), err error) {
	pub, topo, err := newPublisher[K](cfg)
	if err != nil {
		return nil, nil, err
	}
	w := &writer[K, E]{pub: pub, topo: topo, codec: cfg.Codec}
	w.checked = func() { between(func(k K) { w.failed.Fail(k, errors.New("a send failed meanwhile")) }) }
	write = func(ctx context.Context, key K, event E) error {
		ch := make(chan error, 1)
		w.Write(ctx, key, event, func(err error) { ch <- err })
		return <-ch
	}
	return write, pub.close, nil
}
