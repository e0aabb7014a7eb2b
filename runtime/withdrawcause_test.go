package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// A withdrawal whose context ends with a cause cancels the running attempt
// with that cause: context.Cause of the handler's context, and of contexts
// the handler derived from it before and after, says why (a transport's
// lease was lost), while Err stays context.Canceled. A withdrawal without
// a cause leaves context.Cause at Err, as before.
func TestWithdrawCancelsWithItsCause(t *testing.T) {
	lost := errors.New("the lease was lost")
	for _, tc := range []struct {
		name  string
		cause error // nil: a context without a cause
		want  error
	}{
		{"with a cause", lost, lost},
		{"without one", nil, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type seen struct{ err, cause, child, later, value error }
			got := make(chan seen, 1)
			started := make(chan struct{})
			var log tagLog
			e := mustNew(t, func(ctx context.Context, _ string, _ ev) error {
				type key struct{}
				child, cancel := context.WithCancel(context.WithValue(ctx, key{}, "v"))
				defer cancel()
				close(started)
				<-child.Done()
				later, cancel2 := context.WithCancel(ctx)
				defer cancel2()
				var value error
				if child.Value(key{}) != "v" {
					value = errors.New("a value of the handler's context was lost")
				}
				got <- seen{ctx.Err(), context.Cause(ctx), context.Cause(child), context.Cause(later), value}
				return ctx.Err()
			}, runtime.Config[string, ev]{OnOutcome: log.on})
			if err := runtime.EngineForTransport(e).SubmitTagged(context.Background(), "k", ev{Seq: 1}, 7); err != nil {
				t.Fatal(err)
			}
			<-started
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			if _, err := runtime.EngineForTransport(e).Withdraw(ctx, func(tag uint64) bool { return tag == 7 }); !errors.Is(err, context.Canceled) {
				t.Errorf("Withdraw returned %v, want context.Canceled", err)
			}
			s := <-got
			if s.err != context.Canceled {
				t.Errorf("the handler's ctx.Err() is %v, want context.Canceled", s.err)
			}
			for what, c := range map[string]error{"its context": s.cause, "a context derived before": s.child, "a context derived after": s.later} {
				if c != tc.want {
					t.Errorf("context.Cause of %s is %v, want %v", what, c, tc.want)
				}
			}
			if s.value != nil {
				t.Error(s.value)
			}
			flush(t, e)
		})
	}
}

// An attempt that ended at its deadline before a withdrawal with a cause
// came keeps DeadlineExceeded as its cause: the first end wins.
func TestWithdrawCauseAfterTheEndIsIgnored(t *testing.T) {
	got := make(chan error, 1)
	expired := make(chan struct{})
	release := make(chan struct{})
	var log tagLog
	e := mustNew(t, func(ctx context.Context, _ string, _ ev) error {
		<-ctx.Done()
		close(expired)
		<-release
		got <- context.Cause(ctx)
		return ctx.Err()
	}, runtime.Config[string, ev]{OnOutcome: log.on, Timeout: time.Millisecond, Retry: runtime.Retry{Attempts: 1}})
	if err := runtime.EngineForTransport(e).SubmitTagged(context.Background(), "k", ev{Seq: 1}, 7); err != nil {
		t.Fatal(err)
	}
	<-expired
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("too late"))
	if _, err := runtime.EngineForTransport(e).Withdraw(ctx, func(tag uint64) bool { return tag == 7 }); !errors.Is(err, context.Canceled) {
		t.Errorf("Withdraw returned %v, want context.Canceled", err)
	}
	close(release)
	if c := <-got; c != context.DeadlineExceeded {
		t.Errorf("context.Cause is %v, want context.DeadlineExceeded", c)
	}
	flush(t, e)
}
