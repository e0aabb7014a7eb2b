package transport

import (
	"context"
	"errors"
	"testing"
)

// heldWriter keeps every write's done until release.
type heldWriter struct{ done []func(error) }

func (w *heldWriter) Write(_ context.Context, _ string, _ int, done func(error)) {
	w.done = append(w.done, done)
}

// A Flush whose ctx ends leaves nothing behind (found in review: each one
// kept its channel and its count until the sink next drained, so under
// steady sends timed-out Flush calls grew the sink without bound), and a
// Flush waiting when the last answer arrives returns.
func TestFlushGivenUpLeavesNothingBehind(t *testing.T) {
	w := &heldWriter{}
	s, err := NewOrderedSink[string, int](w)
	if err != nil {
		t.Fatal(err)
	}
	s.SendAsync(context.Background(), "k", 1, func(error) {})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		if err := s.Flush(done); !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush with a send in flight and its ctx ended: %v", err)
		}
	}
	if s.drained.Waiting() {
		t.Fatal("Flush calls still counted as waiting after they returned")
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(context.Background()) }()
	w.done[0](nil) // before or after Flush looked: either way it returns
	if err := <-flushed; err != nil {
		t.Fatalf("Flush after the last answer: %v", err)
	}
}
