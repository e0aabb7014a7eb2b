package delivery

import (
	"context"
	"errors"
	"testing"
)

func TestRun(t *testing.T) {
	plan := []Sent[int]{{Event: 1, Kind: First}, {Event: 2, Kind: First}, {Event: 1, Index: 0, Kind: Duplicate}}
	var got []int
	flushed := false
	publish := func(_ context.Context, e int) error { got = append(got, e); return nil }
	flush := func(context.Context) error { flushed = true; return nil }
	if err := Run(context.Background(), plan, publish, flush); err != nil || len(got) != 3 || got[2] != 1 || !flushed {
		t.Fatalf("Run: %v, published %v, flushed %v", err, got, flushed)
	}
	boom := errors.New("boom")
	got, flushed = nil, false
	fail := func(_ context.Context, e int) error {
		if e == 2 {
			return boom
		}
		got = append(got, e)
		return nil
	}
	if err := Run(context.Background(), plan, fail, flush); !errors.Is(err, boom) || len(got) != 1 || flushed {
		t.Errorf("Run with a failing publish: %v, published %v, flushed %v", err, got, flushed)
	}
	if err := Run(context.Background(), plan, publish, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Run with a failing flush: %v", err)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{First: "first", Duplicate: "duplicate", Redelivery: "redelivery", Lost: "lost", 9: "Kind(9)"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}
