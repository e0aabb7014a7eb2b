package delivery

import (
	"slices"
	"testing"
)

// small and wide are two event types of one entity, with versions of two
// integer kinds.
type (
	entityEvent interface{ EventKey() string }
	small       struct {
		Key string
		Rev uint16
	}
	wide struct {
		Key string
		Rev int64
	}
)

func (e small) EventKey() string { return e.Key }
func (e wide) EventKey() string  { return e.Key }

func TestValue(t *testing.T) {
	s := small{Key: "a"}
	if v, ok := Value[entityEvent](&s); !ok || v != entityEvent(s) {
		t.Errorf("a pointer gave %v, %v; want its value", v, ok)
	}
	if v, ok := Value[entityEvent](s); !ok || v != entityEvent(s) {
		t.Errorf("a value gave %v, %v", v, ok)
	}
	if _, ok := Value[entityEvent](nil); ok {
		t.Error("a nil event gave a value")
	}
	if _, ok := Value[entityEvent]((*small)(nil)); ok {
		t.Error("a nil pointer gave a value")
	}
}

// Sequence numbers each key's events from 1 in the order given, whatever
// the version's integer kind, and leaves the originals as they were.
func TestSequence(t *testing.T) {
	first := &small{Key: "a", Rev: 9}
	got := Sequence[string, entityEvent]("Rev", []entityEvent{first, wide{Key: "b"}, small{Key: "a"}, nil, wide{Key: "a", Rev: 7}, (*wide)(nil)})
	want := []entityEvent{small{Key: "a", Rev: 1}, wide{Key: "b", Rev: 1}, small{Key: "a", Rev: 2}, wide{Key: "a", Rev: 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Sequence gave %v, want %v", got, want)
	}
	if first.Rev != 9 {
		t.Errorf("Sequence changed the event it was given: Rev %d", first.Rev)
	}
}
