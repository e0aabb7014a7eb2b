package peers

import "context"

// Event is the event every peer carries. It is small and the same for all
// peers, so no peer pays for a richer type than another.
type Event struct {
	// Key is the index of the event's key in the workload's key slice.
	Key uint32
	// Seq is the event's position among the events of its key, from 1.
	Seq uint32
	// Index is the event's position in the whole run, from 0.
	Index uint32
}

// Handler handles one event. Peers call it from their own goroutines; the
// ordered peers never call it for two events of one key at once, and call
// it for a key's events in submission order.
type Handler func(key string, ev Event)

// Peer is a dispatcher under test.
type Peer interface {
	// Submit hands one event of key to the peer. Several goroutines may
	// call it at once; the events of one key always come from the same
	// goroutine, so their order is that goroutine's.
	Submit(ctx context.Context, key string, ev Event) error
	// Drain returns once every submitted event has been handled. Submit
	// must not be called after Drain.
	Drain(ctx context.Context) error
	// Close releases the peer's goroutines and resources. Call it once,
	// after Drain.
	Close(ctx context.Context) error
}

// Spec names a peer and says how to build one.
type Spec struct {
	// Name is the peer's name in benchmark names.
	Name string
	// Ordered reports whether the peer keeps per-key order.
	Ordered bool
	// New builds a started peer that calls h for each event with at most
	// workers handlers running at once.
	New func(h Handler, workers int) (Peer, error)
}

// Capacity is the number of submitted but unhandled events that a peer
// buffers before Submit blocks (split evenly over its channels), where the
// peer's design has such a bound.
const Capacity = 1 << 16

// All returns every peer, in the order the suite reports them.
func All() []Spec {
	return []Spec{
		{Name: "ordergen", Ordered: true, New: NewOrdergen},
		{Name: "generated", Ordered: true, New: NewGenerated},
		{Name: "policies", Ordered: true, New: NewPolicies},
		{Name: "pool", Ordered: false, New: NewPool},
		{Name: "striped", Ordered: true, New: NewStriped},
		{Name: "chained", Ordered: true, New: NewChained},
		{Name: "watermill", Ordered: true, New: NewWatermill},
	}
}
