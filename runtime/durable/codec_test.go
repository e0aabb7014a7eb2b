package durable_test

import (
	"errors"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

type accountID string

func TestKeyCodecRoundTrips(t *testing.T) {
	roundTrip(t, "alice")
	roundTrip(t, accountID("named"))
	roundTrip(t, int64(-42))
	roundTrip(t, uint8(255))
	roundTrip(t, int(7))
}

func roundTrip[K comparable](t *testing.T, key K) {
	t.Helper()
	s, err := durable.EncodeKey(key)
	if err != nil {
		t.Fatalf("EncodeKey(%v): %v", key, err)
	}
	back, err := durable.DecodeKey[K](s)
	if err != nil || back != key {
		t.Fatalf("DecodeKey(%q) = %v, %v; want %v", s, back, err, key)
	}
}

func TestKeyCodecRefusesBadInput(t *testing.T) {
	if _, err := durable.DecodeKey[int8]("300"); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("out of range: %v", err)
	}
	if _, err := durable.DecodeKey[uint64]("-1"); !errors.Is(err, runtime.ErrInvalidEvent) {
		t.Fatalf("negative unsigned: %v", err)
	}
	if _, err := durable.EncodeKey(1.5); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("float key: %v", err)
	}
	if _, err := durable.DecodeKey[[2]int]("x"); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("array key: %v", err)
	}
}
