package workload

import (
	"strings"
	"testing"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

func TestCheckAcceptsInOrder(t *testing.T) {
	c := NewCheck(3, true, false, Spin{})
	h := c.Handler()
	h("key-1", peers.Event{Key: 1, Seq: 1, Index: 0})
	h("key-2", peers.Event{Key: 2, Seq: 1, Index: 1})
	h("key-1", peers.Event{Key: 1, Seq: 2, Index: 2})
	submitted := make([]uint32, NumKeys)
	submitted[1], submitted[2] = 2, 1
	if err := c.Verify(submitted); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCatchesReorder(t *testing.T) {
	c := NewCheck(2, true, false, Spin{})
	h := c.Handler()
	h("key-1", peers.Event{Key: 1, Seq: 2, Index: 1})
	h("key-1", peers.Event{Key: 1, Seq: 1, Index: 0})
	submitted := make([]uint32, NumKeys)
	submitted[1] = 2
	if err := c.Verify(submitted); err == nil || !strings.Contains(err.Error(), "order violated") {
		t.Fatalf("err = %v, want an order violation", err)
	}
}

func TestCheckCatchesLoss(t *testing.T) {
	c := NewCheck(2, true, false, Spin{})
	c.Handler()("key-1", peers.Event{Key: 1, Seq: 1, Index: 0})
	submitted := make([]uint32, NumKeys)
	submitted[1] = 2
	if err := c.Verify(submitted); err == nil {
		t.Fatal("a lost event went unnoticed")
	}
}

func TestCheckUnorderedCatchesDuplicate(t *testing.T) {
	c := NewCheck(2, false, false, Spin{})
	h := c.Handler()
	h("key-1", peers.Event{Key: 1, Seq: 2, Index: 1})
	h("key-1", peers.Event{Key: 1, Seq: 2, Index: 1})
	h("key-1", peers.Event{Key: 1, Seq: 1, Index: 0})
	if err := c.Verify(nil); err == nil || !strings.Contains(err.Error(), "handled 2 times") {
		t.Fatalf("err = %v, want a duplicate", err)
	}
}

func TestSequenceIsSkewed(t *testing.T) {
	seq := Spec{Skewed: true}.Sequence()
	hot := 0
	for _, k := range seq {
		if k == HotKey {
			hot++
		}
	}
	if share := float64(hot) / float64(len(seq)); share < 0.49 || share > 0.51 {
		t.Errorf("hot key share %.3f, want about 0.5", share)
	}
	if len(seq)&(len(seq)-1) != 0 {
		t.Errorf("sequence length %d is not a power of two", len(seq))
	}
}

func TestCalibrate(t *testing.T) {
	if s := Calibrate(0); s.Iterations() != 0 {
		t.Errorf("Calibrate(0) loops %d times", s.Iterations())
	}
	if s := Calibrate(1000); s.Iterations() < 1 {
		t.Errorf("Calibrate(1µs) loops %d times", s.Iterations())
	}
}
