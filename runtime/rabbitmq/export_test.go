package rabbitmq

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
