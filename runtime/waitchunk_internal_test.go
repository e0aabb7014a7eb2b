package runtime

import (
	"context"
	"io"
	"log/slog"
	goruntime "runtime"
	"testing"
	"time"
)

// The chunk of finished inline events whose room is released together
// while a submitter waits: a 64th of the smaller limit, at least 1 and at
// most releaseEvery.
func TestWaitChunk(t *testing.T) {
	for _, c := range []struct {
		perKey, total int
		want          int64
	}{
		{1, 1, 1}, {3, 3, 1}, {100, 3, 1}, {640, 65536, 10}, {65536, 640, 10}, {65536, 65536, releaseEvery}, {1 << 30, 1 << 30, releaseEvery},
	} {
		if got := waitChunk(Backlog{PerKey: c.perKey, Total: c.total}); got != c.want {
			t.Errorf("per key %d, total %d: chunk %d, want %d", c.perKey, c.total, got, c.want)
		}
	}
}

// Under a small limit, a submitter waiting for room gets the room of an
// inline event as soon as the worker goes on to the next event of its
// batch, not when the batch ends: here the next event blocks until the
// waiting submission is accepted.
func TestSmallLimitReleasesRoomEventByEvent(t *testing.T) {
	releaseA, releaseB, releaseC := make(chan struct{}), make(chan struct{}), make(chan struct{})
	started := make(chan string, 8)
	var keys []string
	gate := map[int]chan struct{}{}
	cfg := Config[string, int]{
		MaxActive: 1,
		Backlog:   Backlog{PerKey: 3, Total: 3, WhenFull: Block},
		clock:     &manualClock{}, // no watchdog tick spills the blocked batch
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	e, err := New(func(_ context.Context, key string, ev int) error {
		started <- key
		if g := gate[ev]; g != nil {
			<-g
		}
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, keys = sameShard(e, 4)
	a, b, c, d := keys[0], keys[1], keys[2], keys[3]
	gate[1], gate[2], gate[3] = releaseC, releaseA, releaseB
	defer func() {
		if err := e.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	defer close(releaseB) // before Close, also when the test fails
	ctx := context.Background()
	mustSubmit := func(key string, ev int) {
		t.Helper()
		if err := e.Submit(ctx, key, ev); err != nil {
			t.Fatal(err)
		}
	}
	mustSubmit(c, 1) // runs alone and blocks: a and b join the inbox behind it
	if k := <-started; k != c {
		t.Fatalf("first started %s, want %s", k, c)
	}
	mustSubmit(a, 2)
	mustSubmit(b, 3)
	close(releaseC) // the next batch is a, then b
	if k := <-started; k != a {
		t.Fatalf("second started %s, want %s", k, a)
	}
	mustSubmit(d, 4) // the backlog is full: a (running), b and d
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		waited <- e.Submit(ctx, d, 5)
	}()
	for !e.room.Waiting() {
		goruntime.Gosched()
	}
	close(releaseA) // the worker goes on to b, which blocks until the submission is in
	if k := <-started; k != b {
		t.Fatalf("third started %s, want %s", k, b)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the submission waiting for room while b runs: %v (its room came only with the batch's end)", err)
	}
}
