package transport_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// heldWriter is a broker whose writes wait until the test answers them.
type heldWriter struct {
	mu     sync.Mutex
	writes []heldWrite
}

type heldWrite struct {
	key  string
	n    int
	done func(error)
}

func (w *heldWriter) Write(_ context.Context, key string, n int, done func(error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, heldWrite{key, n, done})
}

// answer answers the i-th write.
func (w *heldWriter) answer(i int, err error) {
	w.mu.Lock()
	done := w.writes[i].done
	w.mu.Unlock()
	done(err)
}

func (w *heldWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

// answers collects the answers SendAsync gives, by send.
type answers struct {
	mu  sync.Mutex
	got map[int][]error
}

func (a *answers) done(i int) func(error) {
	return func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.got == nil {
			a.got = map[int][]error{}
		}
		a.got[i] = append(a.got[i], err)
	}
}

func (a *answers) of(i int) []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got[i]
}

// After a send of a key fails, the key's later sends fail at once with
// ErrKeyPaused (wrapping the failure) without reaching the writer, sends
// already handed over get their own answer, other keys go on, and Resume
// lets the key through again.
func TestOrderedSinkFailurePausesKey(t *testing.T) {
	w := &heldWriter{}
	s, err := transport.NewOrderedSink[string, int](w)
	if err != nil {
		t.Fatal(err)
	}
	var a answers
	ctx := context.Background()
	s.SendAsync(ctx, "k", 1, a.done(1))
	s.SendAsync(ctx, "k", 2, a.done(2)) // handed over before 1 fails
	cause := errors.New("broker said no")
	w.answer(0, cause)
	s.SendAsync(ctx, "k", 3, a.done(3))
	s.SendAsync(ctx, "other", 1, a.done(4))
	if w.count() != 3 {
		t.Fatalf("%d writes reached the writer, want 3: key k's third send must not", w.count())
	}
	if got := a.of(3); len(got) != 1 || !errors.Is(got[0], transport.ErrKeyPaused) || !errors.Is(got[0], cause) {
		t.Errorf("send after the failure answered %v, want ErrKeyPaused wrapping the failure", got)
	}
	if got := a.of(1); len(got) != 1 || !errors.Is(got[0], cause) {
		t.Errorf("failed send answered %v", got)
	}
	w.answer(1, nil)
	w.answer(2, nil)
	if got := a.of(2); len(got) != 1 || got[0] != nil {
		t.Errorf("send handed over before the failure answered %v, want its own answer", got)
	}
	if got := a.of(4); len(got) != 1 || got[0] != nil {
		t.Errorf("other key answered %v", got)
	}
	if p := s.Paused(); len(p) != 1 || !errors.Is(p["k"], cause) {
		t.Errorf("paused keys %v", p)
	}
	if err := s.Send(ctx, "k", 4); !errors.Is(err, transport.ErrKeyPaused) {
		t.Errorf("Send of a paused key: %v", err)
	}
	s.Resume("k")
	s.SendAsync(ctx, "k", 5, a.done(5))
	if w.count() != 4 {
		t.Fatalf("after Resume the send did not reach the writer")
	}
	w.answer(3, nil)
	if got := a.of(5); len(got) != 1 || got[0] != nil {
		t.Errorf("send after Resume answered %v", got)
	}
	if len(s.Paused()) != 0 {
		t.Errorf("paused keys after Resume: %v", s.Paused())
	}
	s.Resume("never-paused") // nothing to do
}

// Flush waits for every send in flight; Close refuses later sends.
func TestOrderedSinkFlushAndClose(t *testing.T) {
	w := &heldWriter{}
	s, _ := transport.NewOrderedSink[string, int](w)
	var a answers
	ctx := context.Background()
	s.SendAsync(ctx, "a", 1, a.done(1))
	s.SendAsync(ctx, "b", 1, a.done(2))
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := s.Flush(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with sends in flight returned %v", err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	w.answer(0, nil)
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v with a send in flight", err)
	default:
	}
	w.answer(1, nil)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, "a", 2); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := transport.NewOrderedSink[string, int](nil); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("nil writer: %v", err)
	}
}

// The failure rule against a model, under random sends, answers (in order
// per key, as a broker gives them) and resumes: every send is answered
// once; a send reaches the writer unless its key was paused by an earlier
// failure not yet resumed, which it then reports; a key's writes reach the
// writer in the order of the sends.
func TestOrderedSinkModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := &heldWriter{}
		s, _ := transport.NewOrderedSink[string, int](w)
		var a answers
		keys := []string{"a", "b", "c"}
		paused := map[string]bool{}
		next := map[string]int{}       // next unanswered write per key, by index in w.writes
		written := map[string][]int{}  // sends that reached the writer, by key
		refused := map[int]bool{}      // sends refused as paused
		answered := map[int]struct{}{} // writes answered
		sends := 0
		ctx := context.Background()
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			key := rapid.SampledFrom(keys).Draw(t, "key")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1: // send
				sends++
				before := w.count()
				s.SendAsync(ctx, key, sends, a.done(sends))
				if paused[key] {
					refused[sends] = true
					if w.count() != before {
						t.Fatalf("send %d of paused key %s reached the writer", sends, key)
					}
				} else {
					written[key] = append(written[key], sends)
				}
			case 2: // the broker answers the key's oldest write
				for i := next[key]; i < w.count(); i++ {
					w.mu.Lock()
					wr := w.writes[i]
					w.mu.Unlock()
					if wr.key != key {
						continue
					}
					if _, done := answered[i]; done {
						continue
					}
					fail := rapid.Bool().Draw(t, "fail")
					var err error
					if fail {
						err = fmt.Errorf("write %d failed", wr.n)
						paused[key] = true
					}
					answered[i] = struct{}{}
					next[key] = i + 1
					w.answer(i, err)
					break
				}
			case 3:
				s.Resume(key)
				paused[key] = false
			}
		}
		for i := range w.count() {
			if _, done := answered[i]; !done {
				w.answer(i, nil)
			}
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= sends; n++ {
			got := a.of(n)
			if len(got) != 1 {
				t.Fatalf("send %d answered %d times", n, len(got))
			}
			if refused[n] != errors.Is(got[0], transport.ErrKeyPaused) {
				t.Fatalf("send %d answered %v, refused as paused: %v", n, got[0], refused[n])
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		order := map[string][]int{}
		for _, wr := range w.writes {
			order[wr.key] = append(order[wr.key], wr.n)
		}
		for _, k := range keys {
			if fmt.Sprint(order[k]) != fmt.Sprint(written[k]) {
				t.Fatalf("key %s reached the writer as %v, sent %v", k, order[k], written[k])
			}
		}
	})
}

// bothSink is a Sink, and an AsyncSink too when async is set; it records
// how each event was sent.
type bothSink struct{ sent []string }

func (s *bothSink) Send(_ context.Context, key string, _ tev) error {
	s.sent = append(s.sent, "sync "+key)
	return nil
}

type asyncSink struct{ bothSink }

func (s *asyncSink) SendAsync(_ context.Context, key string, _ tev, done func(error)) {
	s.sent = append(s.sent, "async "+key)
	done(nil)
}

func (s *asyncSink) Resume(string)               {}
func (s *asyncSink) Flush(context.Context) error { return nil }

// SendAsync, behind generated producers' PublishAsync, sends without
// waiting through an AsyncSink and synchronously through another Sink,
// answers a refused event through done without sending it, and takes a nil
// done.
func TestSendAsync(t *testing.T) {
	var answers []error
	done := func(err error) { answers = append(answers, err) }
	plain, async := &bothSink{}, &asyncSink{}
	transport.SendKeyed[string, tev](context.Background(), plain, tev{Key: "a"}, nil, done)
	transport.SendKeyed[string, tev](context.Background(), async, tev{Key: "b"}, nil, done)
	bad := fmt.Errorf("refused: %w", runtime.ErrInvalidEvent)
	transport.SendKeyed[string, tev](context.Background(), plain, tev{}, bad, done)
	transport.SendKeyed[string, tev](context.Background(), plain, tev{Key: "c"}, nil, nil)
	if !slices.Equal(plain.sent, []string{"sync a", "sync c"}) || !slices.Equal(async.sent, []string{"async b"}) {
		t.Fatalf("sent: plain %v, async %v", plain.sent, async.sent)
	}
	if len(answers) != 3 || answers[0] != nil || answers[1] != nil || !errors.Is(answers[2], runtime.ErrInvalidEvent) {
		t.Fatalf("answers %v", answers)
	}
}
