package transporttest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// poisonToDeadLetter: a message that cannot be decoded goes to the
// broker's dead-letter mechanism, once, and settles: its key's other
// events and the other keys go on in order, and a restart does not see it
// again.
func (s *suite) poisonToDeadLetter(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	a := s.start(t, st, b, memberSpec{name: "a"})
	p := s.publisher(t, st)
	others := keys("k", s.n(10, 2))
	p.publish(t, append([]string{"p"}, others...), 1, 2)
	body := []byte(`{"Key":"p","Seq":broken`)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := st.PublishPoison(ctx, "p", body); err != nil {
		t.Fatalf("PublishPoison: %v", err)
	}
	p.publish(t, append([]string{"p"}, others...), 3, 4)
	total := 4 * (1 + len(others))
	b.wait(t, total, s.timeout, "every event around the poison message")
	dls := s.deadLetters(t, st, 1)
	if dl := dls[0]; dl.Key != "p" || !bytes.Equal(dl.Body, body) {
		t.Errorf("dead letter %q of key %q (reason %q), want %q of key p", dl.Body, dl.Key, dl.Reason, body)
	}
	a.close(t, s.timeout)

	// A restart sees nothing of what was settled: the next event of every
	// key comes first, and no second dead letter.
	bm := s.start(t, st, b, memberSpec{name: "b"})
	p.publish(t, append([]string{"p"}, others...), 5, 5)
	b.wait(t, total+1+len(others), s.timeout, "the events published after the restart")
	bm.close(t, s.timeout)
	b.check(t, total+1+len(others), s.afterClose())
	s.noMoreDeadLetters(t, st)
}

// failedHandlerToDeadLetter: under the runtime.SendToDeadLetter policy an event
// whose handler fails for good goes to the broker's dead-letter mechanism
// through the transport's DeadLetterSink, and its key goes on.
func (s *suite) failedHandlerToDeadLetter(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	bad := Event{Key: "h", Seq: 2}
	sink := st.DeadLetterSink(t)
	if sink == nil {
		t.Fatal("Stream.DeadLetterSink returned nil")
	}
	a := s.start(t, st, b, memberSpec{
		name: "a",
		handle: func(ctx context.Context, m *member, e Event) error {
			defer b.begin(ctx, e)()
			if e == bad {
				b.giveUp(e)
				return runtime.Permanent(errors.New("broken for good"))
			}
			b.apply(m.name, e)
			return nil
		},
		engine: func(rc *runtime.Config[string, Event]) {
			rc.OnExhausted = runtime.SendToDeadLetter
			rc.DeadLetter = sink
		},
	})
	p := s.publisher(t, st)
	others := keys("k", s.n(10, 2))
	p.publish(t, append([]string{"h"}, others...), 1, 4)
	want := 3 + 4*len(others)
	b.wait(t, want, s.timeout, "every event but the one dead-lettered")
	dls := s.deadLetters(t, st, 1)
	got, err := Codec{}.Decode(EventType, dls[0].Body)
	if err != nil || got != bad || dls[0].Key != "h" {
		t.Errorf("dead letter %q of key %q (decoded %+v, %v), want the event %+v", dls[0].Body, dls[0].Key, got, err, bad)
	}
	a.close(t, s.timeout)
	b.check(t, want, s.afterClose())
	s.noMoreDeadLetters(t, st)
}

// deadLetters waits until n dead letters arrived and returns them.
func (s *suite) deadLetters(t *testing.T, st Stream, n int) []DeadLetter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var out []DeadLetter
	for len(out) < n {
		dls, err := st.DeadLetters(ctx)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("DeadLetters: %v", err)
		}
		out = append(out, dls...)
		if ctx.Err() != nil {
			t.Fatalf("timed out after %v: %d dead letters arrived, want %d", s.timeout, len(out), n)
		}
	}
	if len(out) > n {
		t.Errorf("%d dead letters arrived, want %d: %+v", len(out), n, out)
	}
	return out
}

// noMoreDeadLetters fails t if another dead letter arrives within a short
// wait: a message dead-lettered twice (not settled the first time).
func (s *suite) noMoreDeadLetters(t *testing.T, st Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	dls, err := st.DeadLetters(ctx)
	if err != nil && ctx.Err() == nil {
		t.Fatalf("DeadLetters: %v", err)
	}
	if len(dls) > 0 {
		t.Errorf("%d more dead letters arrived: %+v", len(dls), dls)
	}
}
