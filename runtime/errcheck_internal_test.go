package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ordergen/ordergen/runtime/internal/gen"
)

// TestErrorChecksDoNotAllocate keeps the checks that run on every attempt's
// result free of allocations: a batch's result was checked for Verdicts
// with errors.As, whose target escaped, so every batch allocated, verdicts
// or not (BenchmarkLaneEngines/batch: 0 -> 7 B/op).
func TestErrorChecksDoNotAllocate(t *testing.T) {
	skip := fmt.Errorf("guard: %w", SkipApplied("duplicate"))
	hold := Hold("gap")
	permanent := fmt.Errorf("handler: %w", Permanent(errors.New("bad")))
	verdicts := error(&gen.Verdicts{Verdicts: []error{nil}})
	var results []bool
	allocs := testing.AllocsPerRun(100, func() {
		_, isBatch, _ := batchVerdicts(nil, 1)
		_, isSkip := IsSkip(skip)
		_, isHold := IsHold(hold)
		results = append(results[:0], isBatch, isVerdicts(verdicts), isSkip, skipApplied(skip), isHold, IsPermanent(permanent), IsPermanent(skip))
	})
	if allocs != 0 {
		t.Errorf("the error checks allocated %v times a run, want 0", allocs)
	}
	want := []bool{false, true, true, true, true, true, false}
	if fmt.Sprint(results) != fmt.Sprint(want) {
		t.Errorf("the error checks said %v, want %v", results, want)
	}
}
