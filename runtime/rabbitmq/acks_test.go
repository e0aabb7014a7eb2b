package rabbitmq_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/runtime/rabbitmq"
)

// broker models a channel's unacknowledged deliveries as RabbitMQ keeps
// them: an ack or a reject of a tag it does not hold closes the channel
// (PRECONDITION_FAILED, unknown delivery tag), and a multiple ack takes
// every delivery up to its tag.
type broker struct {
	unacked map[uint64]bool
	acked   map[uint64]bool
	dead    map[uint64]bool // rejected to the dead-letter exchange
}

func (b *broker) apply(t *rapid.T, f rabbitmq.Frame) {
	if !b.unacked[f.Tag()] {
		t.Fatalf("frame %+v names tag %d, which the broker does not hold: the channel would close", f, f.Tag())
	}
	switch {
	case f.Reject():
		delete(b.unacked, f.Tag())
		b.dead[f.Tag()] = true
	case f.Multiple():
		for tag := range b.unacked {
			if tag <= f.Tag() {
				delete(b.unacked, tag)
				b.acked[tag] = true
			}
		}
	default:
		delete(b.unacked, f.Tag())
		b.acked[f.Tag()] = true
	}
}

// The ledger's frames, for any interleaving of deliveries, settlements
// and passes, never name a tag the broker does not hold, never acknowledge
// an unsettled delivery (a multiple ack over one would lose it), reject
// exactly the bad ones and acknowledge exactly the finished ones.
func TestLedgerFramesAreSafe(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := rabbitmq.NewLedger()
		b := &broker{unacked: map[uint64]bool{}, acked: map[uint64]bool{}, dead: map[uint64]bool{}}
		next := uint64(1)
		state := map[uint64]string{} // delivered, ack, reject
		var open []uint64            // delivered and not settled
		multiples := 0
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3:
				l.Deliver(next)
				b.unacked[next] = true
				state[next] = "delivered"
				open = append(open, next)
				next++
			case 4, 5, 6:
				if len(open) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(open)-1).Draw(t, "which")
				tag := open[i]
				open = append(open[:i], open[i+1:]...)
				reject := rapid.IntRange(0, 5).Draw(t, "reject") == 0
				l.Settle(tag, reject)
				state[tag] = "ack"
				if reject {
					state[tag] = "reject"
				}
			default:
				for _, f := range l.Take() {
					if f.Multiple() {
						multiples++
					}
					b.apply(t, f)
				}
				for tag := range b.acked {
					if state[tag] != "ack" {
						t.Fatalf("tag %d acknowledged while %s", tag, state[tag])
					}
				}
				for tag := range b.dead {
					if state[tag] != "reject" {
						t.Fatalf("tag %d rejected while %s", tag, state[tag])
					}
				}
			}
		}
		for _, f := range l.Take() {
			b.apply(t, f)
		}
		for tag, st := range state {
			switch {
			case st == "delivered" && !b.unacked[tag]:
				t.Fatalf("unsettled tag %d was settled", tag)
			case st == "ack" && !b.acked[tag]:
				t.Fatalf("finished tag %d was never acknowledged", tag)
			case st == "reject" && !b.dead[tag]:
				t.Fatalf("bad tag %d was never rejected", tag)
			}
		}
		if got := l.Unsettled(); got != len(open) {
			t.Fatalf("ledger counts %d unsettled, want %d", got, len(open))
		}
	})
}

// A run of finished deliveries below every unsettled one goes out as one
// multiple ack; finished ones above an unsettled one go singly; a reject
// splits a run.
func TestLedgerBatchesRunsBelowTheLowestUnsettled(t *testing.T) {
	l := rabbitmq.NewLedger()
	for tag := uint64(1); tag <= 8; tag++ {
		l.Deliver(tag)
	}
	for _, tag := range []uint64{1, 2, 3, 5, 7} {
		l.Settle(tag, false)
	}
	l.Settle(4, true)
	// 6 and 8 stay unsettled.
	got := l.Take()
	want := []struct {
		tag              uint64
		multiple, reject bool
	}{{3, true, false}, {4, false, true}, {5, false, false}, {7, false, false}}
	if len(got) != len(want) {
		t.Fatalf("frames %v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].Tag() != w.tag || got[i].Multiple() != w.multiple || got[i].Reject() != w.reject {
			t.Errorf("frame %d: tag %d multiple %v reject %v, want %+v", i, got[i].Tag(), got[i].Multiple(), got[i].Reject(), w)
		}
	}
	if n := l.Unsettled(); n != 2 {
		t.Errorf("unsettled %d, want 2 (tags 6 and 8)", n)
	}
}
