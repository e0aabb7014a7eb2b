package transporttest

import (
	"context"
	"errors"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// refusesUnsettleable: a consumer refuses, before it takes anything, a
// target whose subscriber it could not settle messages for (the
// drop-oldest backlog policy would let it acknowledge messages no handler
// ran); Run returns an error wrapping runtime.ErrInvalidConfig. A correct
// consumer then gets every message.
func (s *suite) refusesUnsettleable(t *testing.T) {
	st := s.stream(t, 1)
	b := newBook()
	p := s.publisher(t, st)
	p.publish(t, []string{"k"}, 1, 3)
	bad := s.start(t, st, b, memberSpec{name: "a", engine: func(rc *runtime.Config[string, Event]) {
		rc.Backlog.WhenFull = runtime.DropOldest
	}})
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	select {
	case <-bad.runDone:
	case <-ctx.Done():
		t.Fatal("Run did not refuse a subscriber under the drop-oldest policy")
	}
	if !errors.Is(bad.runErr, runtime.ErrInvalidConfig) {
		t.Errorf("Run returned %v, want an error wrapping runtime.ErrInvalidConfig", bad.runErr)
	}
	bad.ended.Store(true)
	_ = bad.engine.Close(ctx)
	_ = bad.c.Close(ctx)
	good := s.start(t, st, b, memberSpec{name: "b"})
	b.wait(t, 3, s.timeout, "every event, by a consumer with a correct target")
	good.close(t, s.timeout)
	b.check(t, 3, s.afterClose())
}
