package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// intCodec encodes int events as decimal text named "int".
type intCodec struct{}

func (intCodec) Encode(e int) (string, []byte, error) {
	if e < 0 {
		return "", nil, fmt.Errorf("%w: negative", runtime.ErrInvalidEvent)
	}
	return "int", []byte(strconv.Itoa(e)), nil
}

func (intCodec) Decode(name string, data []byte) (int, error) {
	if name != "int" {
		return 0, fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", runtime.ErrInvalidEvent, err)
	}
	return n, nil
}

func TestEncodedParksRoundTrip(t *testing.T) {
	ctx := context.Background()
	raw := runtime.NewMemoryParkStore[string, durable.RawEvent]()
	ps := durable.EncodedParks[int64, int](raw, intCodec{})
	if err := ps.Append(ctx, -7, "boom", []runtime.ParkedEvent[int]{{Event: 1, Err: "e", Attempts: 3}, {Event: 2}}); err != nil {
		t.Fatal(err)
	}
	keys, err := ps.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Key != -7 || keys[0].Events != 2 || keys[0].Reason != "boom" {
		t.Fatalf("keys %+v, %v", keys, err)
	}
	rawKeys, _ := raw.Keys(ctx)
	if rawKeys[0].Key != "-7" {
		t.Fatalf("stored key %q, want the text form -7", rawKeys[0].Key)
	}
	evs, err := ps.Read(ctx, -7, 0, 0)
	if err != nil || len(evs) != 2 || evs[0].Event != 1 || evs[0].Attempts != 3 || evs[1].Event != 2 || evs[1].Seq <= evs[0].Seq {
		t.Fatalf("read %+v, %v", evs, err)
	}
	if err := ps.Remove(ctx, -7, evs[0].Seq); err != nil {
		t.Fatal(err)
	}
	if n, err := ps.Clear(ctx, -7); err != nil || n != 1 {
		t.Fatalf("clear: %d, %v", n, err)
	}
	if err := ps.Append(ctx, 1, "r", []runtime.ParkedEvent[int]{{Event: -1}}); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("an event the codec refuses: %v", err)
	}
}

func TestEncodedParksReportCorruptRows(t *testing.T) {
	ctx := context.Background()
	raw := runtime.NewMemoryParkStore[string, durable.RawEvent]()
	if err := raw.Append(ctx, "not-a-number", "r", []runtime.ParkedEvent[durable.RawEvent]{{Event: durable.RawEvent{Name: "int", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	ints := durable.EncodedParks[int64, int](raw, intCodec{})
	if _, err := ints.Keys(ctx); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("a key that does not decode: %v", err)
	}
	strs := durable.EncodedParks[string, int](raw, intCodec{})
	if _, err := strs.Read(ctx, "not-a-number", 0, 0); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("an event that does not decode: %v", err)
	}
	type point struct{ X int }
	bad := durable.EncodedParks[point, int](raw, intCodec{})
	if _, err := bad.Read(ctx, point{}, 0, 0); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("a key type without a text form: %v", err)
	}
}

func TestEncodedVersionsAndStates(t *testing.T) {
	ctx := context.Background()
	rawV := runtime.NewMemoryVersionStore[string]()
	vs := durable.EncodedVersions[uint16](rawV)
	if ok, err := vs.CompareAndSet(ctx, 9, 0, 4); err != nil || !ok {
		t.Fatalf("compare-and-set: %v %v", ok, err)
	}
	if v, _ := rawV.Version(ctx, "9"); v != 4 {
		t.Fatalf("stored under the text key: %d", v)
	}
	if v, err := vs.Version(ctx, 9); err != nil || v != 4 {
		t.Fatalf("version %d, %v", v, err)
	}
	rawS := runtime.NewMemoryStateStore[string]()
	ss := durable.EncodedStates[accountID](rawS)
	if ok, err := ss.CompareAndSetState(ctx, "a", "", "Open"); err != nil || !ok {
		t.Fatalf("compare-and-set: %v %v", ok, err)
	}
	if s, err := ss.State(ctx, "a"); err != nil || s != "Open" {
		t.Fatalf("state %q, %v", s, err)
	}
	type point struct{ X int }
	if _, err := durable.EncodedVersions[point](rawV).Version(ctx, point{}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("a key type without a text form: %v", err)
	}
}
