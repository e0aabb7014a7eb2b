package runtime

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// unlanedRoom, with the headroom it keeps between full counts, answers as a
// count of the key's events would, whatever the shard's keys were admitted,
// left (finished, moved to lanes, taken into a batch that then runs) or
// refused in between.
func TestPropertyUnlanedRoomIsTheCount(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		perKey := rapid.IntRange(1, 80).Draw(rt, "perKey")
		nkeys := rapid.IntRange(1, 12).Draw(rt, "keys")
		sh := &shard[string, int]{}
		key := func() string { return fmt.Sprintf("k%d", rapid.IntRange(0, nkeys-1).Draw(rt, "key")) }
		for range rapid.IntRange(1, 600).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 6: // a submission, admitted if the answer says so
				k := key()
				want := sh.unlanedCount(k) < perKey
				if got := sh.unlanedRoom(k, perKey); got != want {
					rt.Fatalf("key %s with %d of limit %d: room %v", k, sh.unlanedCount(k), perKey, got)
				}
				if want {
					sh.inbox = append(sh.inbox, entry[string, int]{key: k})
				}
			case op == 6 && len(sh.inbox) > 0: // an inbox event leaves (withdrawn, dropped, moved)
				i := rapid.IntRange(0, len(sh.inbox)-1).Draw(rt, "leaves")
				sh.inbox = append(sh.inbox[:i], sh.inbox[i+1:]...)
			case op == 7 && sh.cur == nil: // a worker takes the inbox as its batch
				b := &inlineBatch[string, int]{entries: sh.inbox}
				b.pos.Store(-1)
				sh.cur, sh.curLen, sh.inbox = b, len(b.entries), nil
			case op == 8 && sh.cur != nil: // the batch runs on, or ends
				b := sh.cur
				if p := b.pos.Load() + int64(rapid.IntRange(1, 8).Draw(rt, "ran")); p < int64(len(b.entries)) {
					b.pos.Store(p)
				} else {
					sh.cur, sh.curLen = nil, 0
				}
			case op == 9 && sh.cur != nil: // a later event of the batch moves to its key's lane
				b := sh.cur
				if i := int(b.pos.Load()) + 1; i < len(b.entries) {
					b.entries[i].it.moved = true
				}
			}
		}
	})
}

// A shard whose keys are far from the limit is counted once, not at every
// admission: the headroom that count leaves lets the next submissions in
// without a scan.
func TestUnlanedRoomCountsOnceForManyAdmissions(t *testing.T) {
	const perKey = 1000
	sh := &shard[string, int]{}
	for i := range perKey {
		sh.inbox = append(sh.inbox, entry[string, int]{key: fmt.Sprintf("k%d", i%100)}) // 10 each
	}
	if !sh.unlanedRoom("k0", perKey) {
		t.Fatal("a key with 10 of 1000 refused")
	}
	// The largest count is k0's 11 after this admission: 1000-11 more fit.
	if got, want := sh.room.headroom, perKey-11; got != want {
		t.Fatalf("headroom %d after the count, want %d", got, want)
	}
	if sh.room.scansLeft != 0 {
		t.Fatalf("%d single-key scans left after a count that paid", sh.room.scansLeft)
	}
}

// Near the limit a full count buys too little headroom to pay for itself:
// admission goes back to counting the one key, for as many admissions as
// the shard holds events, before it counts every key again.
func TestUnlanedRoomScansOneKeyNearTheLimit(t *testing.T) {
	const perKey = 40
	sh := &shard[string, int]{}
	for i := range perKey - 1 {
		sh.inbox = append(sh.inbox, entry[string, int]{key: "hot"})
		sh.inbox = append(sh.inbox, entry[string, int]{key: fmt.Sprintf("c%d", i)})
	}
	if !sh.unlanedRoom("cold", perKey) {
		t.Fatal("a key with no events refused")
	}
	if got := sh.room.headroom; got != 1 {
		t.Fatalf("headroom %d with a key at 39 of 40, want 1", got)
	}
	if got, want := sh.room.scansLeft, len(sh.inbox); got != want {
		t.Fatalf("%d scans left, want %d", got, want)
	}
	sh.inbox = append(sh.inbox, entry[string, int]{key: "cold"})
	if !sh.unlanedRoom("hot", perKey) { // its 40th: the headroom's last
		t.Fatal("a key with 39 of 40 refused")
	}
	sh.inbox = append(sh.inbox, entry[string, int]{key: "hot"})
	if sh.unlanedRoom("hot", perKey) {
		t.Fatal("a key at its limit admitted")
	}
	if got, want := sh.room.scansLeft, len(sh.inbox)-3; got != want {
		t.Fatalf("%d scans left after one, want %d", got, want)
	}
}

// A limit too small for a full count to pay is never counted whole: each
// admission counts the one key, as a scan.
func TestUnlanedRoomSmallLimitScans(t *testing.T) {
	const perKey = fullCountPays
	sh := &shard[string, int]{}
	for i := range 4 * perKey {
		sh.inbox = append(sh.inbox, entry[string, int]{key: fmt.Sprintf("k%d", i)})
	}
	for range 3 {
		if !sh.unlanedRoom("k0", perKey) {
			t.Fatal("a key with 1 event refused")
		}
		sh.inbox = append(sh.inbox, entry[string, int]{key: "k0"})
	}
	if sh.room.headroom != 0 || sh.room.scansLeft != 0 || sh.room.counts != nil {
		t.Fatalf("a limit of %d was counted whole: %+v", perKey, sh.room)
	}
}
