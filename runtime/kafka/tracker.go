package kafka

import "sort"

// tracker follows the offsets of one assigned partition: which records were
// taken and are not finished yet, so that the partition is committed only
// up to the lowest unfinished offset, with the finished offsets above it in
// the commit metadata.
//
// It keeps only the unfinished offsets (in taken order, which is offset
// order; finished ones become tombstones until compacted) and end, one past
// the last offset seen. Every offset below end that is not in the list is
// finished, including offsets that hold no record (compacted away,
// transaction markers). inherited are the finished spans, at or above end,
// that the previous owner's commit metadata listed and that were not seen
// again yet.
type tracker struct {
	offs      []int64
	at        []int64 // when each was taken (unix nanoseconds)
	done      []bool
	head      int // entries before head are finished
	live      int // unfinished entries
	end       int64
	known     bool // end is known: a commit was fetched or a record seen
	inherited []span

	// Set by measure, for fits.
	mBase  int64
	mRuns  int // raw bytes of the runs encoding at measure
	mLive  int // unfinished entries at measure
	mAdded int // entries added since measure
}

// start sets where consuming starts: the committed offset and the finished
// spans its metadata listed.
func (t *tracker) start(committed int64, inherited []span) {
	t.end, t.known, t.inherited = committed, true, inherited
}

// seen reports whether offset is below end: a record already taken.
func (t *tracker) seen(offset int64) bool { return t.known && offset < t.end }

// inheritedDone reports whether the previous owner listed offset as
// finished.
func (t *tracker) inheritedDone(offset int64) bool {
	for _, s := range t.inherited {
		if offset < s.From {
			return false
		}
		if offset < s.To {
			return true
		}
	}
	return false
}

// skip records offset as seen and finished.
func (t *tracker) skip(offset int64) { t.advance(offset + 1) }

// add records offset as taken, at the time at, and unfinished.
func (t *tracker) add(offset, at int64) {
	t.advance(offset + 1)
	t.offs = append(t.offs, offset)
	t.at = append(t.at, at)
	t.done = append(t.done, false)
	t.live++
	t.mAdded++
}

func (t *tracker) advance(end int64) {
	t.end, t.known = end, true
	for len(t.inherited) > 0 && t.inherited[0].To <= end {
		t.inherited = t.inherited[1:]
	}
	if len(t.inherited) > 0 && t.inherited[0].From < end {
		t.inherited[0].From = end
	}
}

// finish marks offset finished.
func (t *tracker) finish(offset int64) {
	live := t.offs[t.head:]
	i := t.head + sort.Search(len(live), func(i int) bool { return live[i] >= offset })
	if i == len(t.offs) || t.offs[i] != offset || t.done[i] {
		return
	}
	t.done[i] = true
	t.live--
	for t.head < len(t.offs) && t.done[t.head] {
		t.head++
	}
	t.compact()
}

// compact drops tombstones once they are most of the list.
func (t *tracker) compact() {
	n := len(t.offs) - t.head
	if n < 1024 && t.head < 1024 {
		if t.head == len(t.offs) {
			t.offs, t.at, t.done, t.head = t.offs[:0], t.at[:0], t.done[:0], 0
		}
		return
	}
	if t.live*2 > n && t.head*2 < len(t.offs) {
		return
	}
	k := 0
	for i := t.head; i < len(t.offs); i++ {
		if !t.done[i] {
			t.offs[k], t.at[k], t.done[k] = t.offs[i], t.at[i], false
			k++
		}
	}
	t.offs, t.at, t.done, t.head = t.offs[:k], t.at[:k], t.done[:k], 0
}

// unfinished returns the number of offsets taken and not finished, and
// when the oldest of them was taken (offsets are taken in order, so it is
// the lowest).
func (t *tracker) unfinished() (n int, oldest int64) {
	if t.live == 0 {
		return 0, 0
	}
	return t.live, t.at[t.head]
}

// commitPoint returns the offset to commit, the lowest one not finished,
// and the finished spans above it.
func (t *tracker) commitPoint() (int64, []span) {
	var spans []span
	add := func(from, to int64) {
		if from >= to {
			return
		}
		if k := len(spans); k > 0 && spans[k-1].To == from {
			spans[k-1].To = to
			return
		}
		spans = append(spans, span{From: from, To: to})
	}
	base := t.end
	first := true
	prev := int64(0)
	for i := t.head; i < len(t.offs); i++ {
		if t.done[i] {
			continue
		}
		o := t.offs[i]
		if first {
			base, first = o, false
		} else {
			add(prev+1, o)
		}
		prev = o
	}
	if !first {
		add(prev+1, t.end)
	}
	inh := t.inherited
	if first {
		// Nothing taken is unfinished: the previous owner's finished
		// offsets right at end are committed past.
		for len(inh) > 0 && inh[0].From == base {
			base = inh[0].To
			inh = inh[1:]
		}
	}
	for _, s := range inh {
		add(s.From, s.To)
	}
	return base, spans
}

// measure takes the size of the current map, for fits.
func (t *tracker) measure() {
	base, spans := t.commitPoint()
	t.mBase, t.mLive, t.mAdded = base, t.live, 0
	if len(spans) == 0 {
		t.mRuns = 1 + uvarintLen(uint64(max(base, 0))) + 1
		return
	}
	_, t.mRuns = sizes(base, spans)
}

// fits reports whether the commit metadata stays within limit bytes, however
// the unfinished records finish, if offset is taken too. The bitset of every
// offset from the committed one to offset bounds it; so do the runs measured
// plus two runs for each unfinished record (finishing one splits at most one
// unfinished run in three).
func (t *tracker) fits(offset int64, limit int) bool {
	if offset <= t.mBase {
		return true
	}
	w := uint64(offset - t.mBase)
	v := uvarintLen(w)
	bitset := 1 + uvarintLen(uint64(max(t.mBase, 0))) + v + int((w+7)/8)
	runs := t.mRuns + v + 2*v*(t.mLive+t.mAdded+1)
	return b64Len(min(bitset, runs)) <= limit
}

func b64Len(raw int) int { return (raw*4 + 2) / 3 }
