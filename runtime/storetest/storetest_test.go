package storetest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMemory runs the suite against the in-memory stores: the reference.
func TestMemory(t *testing.T) {
	mem := storetest.Memory()
	storetest.Run(t, storetest.Harness{Open: func(*testing.T) durable.Store { return mem }})
}

func TestCheckWinsFindsDoubleAdvances(t *testing.T) {
	if err := storetest.CheckWins(3, []uint64{1, 3}, []uint64{2}); err != nil {
		t.Fatalf("a correct race reported: %v", err)
	}
	for _, wins := range [][][]uint64{
		{{1, 2}, {2, 3}}, // 2 stored twice
		{{1}, {3}},       // 2 never stored
		{{1, 2, 3, 4}},   // beyond the end
	} {
		if err := storetest.CheckWins(3, wins...); err == nil {
			t.Errorf("CheckWins(3, %v) found nothing", wins)
		}
	}
}
