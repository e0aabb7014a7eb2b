package transport_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

func TestLossKeepsTheFirstCause(t *testing.T) {
	var l transport.Loss
	if l.Err() != nil || transport.IsClosed(l.Lost()) {
		t.Fatal("a new Loss is lost")
	}
	first := errors.New("first")
	var wg sync.WaitGroup
	l.Lose(first)
	for range 4 {
		wg.Go(func() { l.Lose(errors.New("later")) })
	}
	wg.Wait()
	if !transport.IsClosed(l.Lost()) || !errors.Is(l.Err(), first) {
		t.Fatalf("after Lose: closed %v, err %v; want closed, %v", transport.IsClosed(l.Lost()), l.Err(), first)
	}
	var none transport.Loss
	none.Lose(nil)
	if none.Err() == nil {
		t.Fatal("a loss without a cause has no error")
	}
}

func TestDialAbandonsALateConnection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release, abandoned := make(chan struct{}), make(chan int, 1)
	dialled := make(chan struct{})
	go func() {
		<-dialled
		cancel()
	}()
	_, err := transport.Dial(ctx, func() (int, error) {
		close(dialled)
		<-release
		return 7, nil
	}, func(c int) { abandoned <- c })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial after ctx ended: %v, want context.Canceled", err)
	}
	close(release)
	if c := <-abandoned; c != 7 {
		t.Fatalf("abandoned %d, want the late connection 7", c)
	}
	c, err := transport.Dial(context.Background(), func() (int, error) { return 3, nil }, func(int) { t.Error("abandoned a connection in time") })
	if c != 3 || err != nil {
		t.Fatalf("Dial: %d, %v; want 3, nil", c, err)
	}
}

func TestConnWriterRefusesAnIncompleteConfig(t *testing.T) {
	_, err := transport.NewConnWriter(transport.ConnConfig[string, int, int, int]{})
	if !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("NewConnWriter without funcs: %v, want ErrInvalidConfig", err)
	}
}

// TestConnWriterFailsWhatWaitsOnClose checks that Close answers the sends
// waiting, drops the broker's late answers, closes the connection, and
// refuses later writes; and that a connection lost while it was being
// dialled is closed and fails its write.
func TestConnWriterFailsWhatWaitsOnClose(t *testing.T) {
	var mu sync.Mutex
	closed, loseOnDial := 0, true
	w, err := transport.NewConnWriter(transport.ConnConfig[string, int, int, int]{
		System: "fake",
		Dial: func(_ context.Context, lost func(error)) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			if loseOnDial {
				loseOnDial = false
				lost(errors.New("gone at once"))
			}
			return 1, nil
		},
		Encode: func(_ context.Context, _ string, e int) (int, error) { return e, nil },
		Send:   func(int, int) error { return nil },
		Close: func(int) {
			mu.Lock()
			closed++
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	answers := make(chan error, 4)
	w.Write(ctx, "a", 1, func(err error) { answers <- err })
	if err := <-answers; err == nil {
		t.Fatal("a write on a connection lost as it opened succeeded")
	}
	w.Resume("a")
	w.Write(ctx, "a", 2, func(err error) { answers <- err })
	w.Write(ctx, "b", 3, func(err error) { answers <- err })
	w.Answer(3, nil)
	if err := <-answers; err != nil {
		t.Fatalf("answered send: %v", err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-answers; !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("waiting send after Close: %v, want ErrClosed", err)
	}
	w.Answer(2, nil) // late: dropped
	w.Write(ctx, "c", 4, func(err error) { answers <- err })
	if err := <-answers; !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("write after Close: %v, want ErrClosed", err)
	}
	if len(answers) != 0 {
		t.Fatalf("%d answers too many", len(answers))
	}
	mu.Lock()
	defer mu.Unlock()
	if closed != 2 {
		t.Fatalf("closed %d connections, want 2 (the one lost as it opened, then the open one)", closed)
	}
}
