package runtime

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// admitUnlaned is what admission does for key, which has no lane, in sh:
// it asks unlanedRoom once the shard holds perKey events without a lane,
// and an admitted event is accepted into the inbox.
func admitUnlaned(sh *shard[string, int], key string, perKey int) bool {
	if sh.unlaned() >= perKey && !sh.unlanedRoom(key, perKey) {
		return false
	}
	fill(sh, key)
	return true
}

// fill accepts an event of key into sh's inbox without asking.
func fill(sh *shard[string, int], key string) {
	sh.accepted++
	sh.inbox = append(sh.inbox, entry[string, int]{key: key})
}

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
			switch op := rapid.IntRange(0, 10).Draw(rt, "op"); {
			case op < 6: // a submission
				k := key()
				had := sh.unlanedCount(k)
				if got, want := admitUnlaned(sh, k, perKey), had < perKey; got != want {
					rt.Fatalf("key %s with %d of limit %d: admitted %v", k, had, perKey, got)
				}
			case op == 6: // accepted without adding an event (conflated, dropped)
				sh.accepted++
			case op == 7 && len(sh.inbox) > 0: // an inbox event leaves (withdrawn, dropped, moved)
				i := rapid.IntRange(0, len(sh.inbox)-1).Draw(rt, "leaves")
				sh.inbox = append(sh.inbox[:i], sh.inbox[i+1:]...)
			case op == 8 && sh.cur == nil: // a worker takes the inbox as its batch
				b := &inlineBatch[string, int]{entries: sh.inbox}
				b.pos.Store(-1)
				sh.cur, sh.curLen, sh.inbox = b, len(b.entries), nil
			case op == 9 && sh.cur != nil: // the batch runs on, or ends
				b := sh.cur
				if p := b.pos.Load() + int64(rapid.IntRange(1, 8).Draw(rt, "ran")); p < int64(len(b.entries)) {
					b.pos.Store(p)
				} else {
					sh.cur, sh.curLen = nil, 0
				}
			case op == 10 && sh.cur != nil: // a later event of the batch moves to its key's lane
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
// without a scan, and the one after them counts again.
func TestUnlanedRoomCountsOnceForManyAdmissions(t *testing.T) {
	const perKey = 1000
	sh := &shard[string, int]{}
	for i := range perKey {
		admitUnlaned(sh, fmt.Sprintf("k%d", i%100), perKey) // 10 each
	}
	if sh.headroom.counted {
		t.Fatal("counted below the limit")
	}
	if !admitUnlaned(sh, "k0", perKey) {
		t.Fatal("a key with 10 of 1000 refused")
	}
	// The largest count is k0's 11 after this admission: 1000-1-11 more
	// are sure to fit.
	at := sh.headroom.countedAt
	if !sh.headroom.counted || sh.headroom.spare != perKey-1-11 || sh.headroom.scansLeft != 0 {
		t.Fatalf("after the count: %+v", sh.headroom)
	}
	for range sh.headroom.spare {
		if !admitUnlaned(sh, "k1", perKey) {
			t.Fatal("refused within the headroom")
		}
	}
	if sh.headroom.countedAt != at {
		t.Fatal("counted again within the headroom")
	}
	if !admitUnlaned(sh, "k1", perKey) || sh.headroom.countedAt == at {
		t.Fatal("no new count once the headroom was used")
	}
}

// Near the limit a full count buys too little headroom to pay for itself:
// admission goes back to counting the one key, for as many admissions as
// the shard holds events, before it counts every key again.
func TestUnlanedRoomScansOneKeyNearTheLimit(t *testing.T) {
	const perKey = 40
	sh := &shard[string, int]{}
	for i := range perKey - 1 {
		fill(sh, "hot")
		fill(sh, fmt.Sprintf("c%d", i))
	}
	held := sh.unlaned()
	if !admitUnlaned(sh, "cold", perKey) {
		t.Fatal("a key with no events refused")
	}
	if sh.headroom.spare != 0 || sh.headroom.scansLeft != held {
		t.Fatalf("with a key at 39 of 40, after the count: %+v, want no spare and %d scans", sh.headroom, held)
	}
	if !admitUnlaned(sh, "hot", perKey) { // its 40th
		t.Fatal("a key with 39 of 40 refused")
	}
	if admitUnlaned(sh, "hot", perKey) {
		t.Fatal("a key at its limit admitted")
	}
	if got, want := sh.headroom.scansLeft, held-2; got != want {
		t.Fatalf("%d scans left after two, want %d", got, want)
	}
}

// A limit too small for a full count to pay is never counted whole: each
// admission counts the one key, as a scan.
func TestUnlanedRoomSmallLimitScans(t *testing.T) {
	const perKey = fullCountPays
	sh := &shard[string, int]{}
	for i := range 4 * perKey {
		admitUnlaned(sh, fmt.Sprintf("k%d", i), perKey)
	}
	for range 3 {
		if !admitUnlaned(sh, "k0", perKey) {
			t.Fatal("a key with few events refused")
		}
	}
	if sh.headroom.counted || sh.headroom.scansLeft != 0 || sh.headroom.counts != nil {
		t.Fatalf("a limit of %d was counted whole: %+v", perKey, sh.headroom)
	}
}
