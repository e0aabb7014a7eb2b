package delivery

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestInOrderNamesEachSkipButTheAllowed(t *testing.T) {
	describe := func(e int) string { return fmt.Sprintf("event %d", e) }
	skips := []Skip[int]{{Event: 3, Reason: "duplicate: already in state InTransit"}, {Event: 5, Reason: "late transition: state A ranks below B"}}
	err := InOrder(skips, nil, describe)
	if !errors.Is(err, ErrSkippedInOrder) {
		t.Fatalf("InOrder: %v, want ErrSkippedInOrder", err)
	}
	for _, want := range []string{"2 of them", "event 3: duplicate: already in state InTransit", "event 5: late transition: state A ranks below B", "in: [states]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	err = InOrder(skips, []string{"late transition: state A ranks below B"}, describe)
	if !errors.Is(err, ErrSkippedInOrder) || strings.Contains(err.Error(), "event 5") || !strings.Contains(err.Error(), "1 of them") {
		t.Errorf("with the late transition allowed: %v", err)
	}
	if err := InOrder(skips, []string{"duplicate: already in state InTransit", "late transition: state A ranks below B"}, describe); err != nil {
		t.Errorf("with both allowed: %v", err)
	}
	if err := InOrder[int](nil, nil, describe); err != nil {
		t.Errorf("without skips: %v", err)
	}
}

func TestSkipsTakeAndForget(t *testing.T) {
	var s Skips[int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { s.Add(i, "r") })
	}
	wg.Wait()
	if got := s.Take(); len(got) != 8 {
		t.Fatalf("took %d skips, want 8", len(got))
	}
	if got := s.Take(); len(got) != 0 {
		t.Fatalf("took %v again", got)
	}
}
