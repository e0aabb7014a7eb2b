package offsets

import "sort"

// Tracker follows the offsets of one partition of a log: which records were
// taken and are not finished yet, so that the partition is committed only
// up to the lowest unfinished offset, with the finished offsets above it in
// the commit metadata (Encode). The zero Tracker is ready; it is not safe
// for concurrent use (its partition's owner guards it).
//
// It keeps only the unfinished offsets (in taken order, which is offset
// order; finished ones become tombstones until compacted) and end, one past
// the last offset seen. Every offset below end that is not in the list is
// finished, including offsets that hold no record (compacted away,
// transaction markers). inherited are the finished spans, at or above end,
// that the previous owner's commit metadata listed and that were not seen
// again yet.
type Tracker struct {
	offs      []int64
	at        []int64 // when each was taken (unix nanoseconds)
	done      []bool
	head      int // entries before head are finished
	live      int // Unfinished entries
	end       int64
	known     bool // end is known: a commit was fetched or a record seen
	inherited []Span

	// Set by Measure, for Fits.
	mBase  int64
	mRuns  int // raw bytes of the runs encoding at Measure
	mLive  int // unfinished entries at Measure
	mAdded int // entries added since Measure
}

// Start sets where consuming starts: the committed offset and the finished
// spans its metadata listed.
func (t *Tracker) Start(committed int64, inherited []Span) {
	t.end, t.known, t.inherited = committed, true, inherited
}

// Seen reports whether offset is below the end of what was taken or
// skipped: a record already taken (a fetch may return it again).
func (t *Tracker) Seen(offset int64) bool { return t.known && offset < t.end }

// InheritedDone reports whether the previous owner listed offset as
// finished.
func (t *Tracker) InheritedDone(offset int64) bool {
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

// Skip records offset as seen and finished.
func (t *Tracker) Skip(offset int64) { t.advance(offset + 1) }

// Add records offset as taken, at the time at, and unfinished.
func (t *Tracker) Add(offset, at int64) {
	t.advance(offset + 1)
	t.offs = append(t.offs, offset)
	t.at = append(t.at, at)
	t.done = append(t.done, false)
	t.live++
	t.mAdded++
}

func (t *Tracker) advance(end int64) {
	t.end, t.known = end, true
	for len(t.inherited) > 0 && t.inherited[0].To <= end {
		t.inherited = t.inherited[1:]
	}
	if len(t.inherited) > 0 && t.inherited[0].From < end {
		t.inherited[0].From = end
	}
}

// Finish marks offset finished.
func (t *Tracker) Finish(offset int64) {
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
func (t *Tracker) compact() {
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

// Unfinished returns the number of offsets taken and not finished, and
// when the oldest of them was taken, as Add was told (offsets are taken in
// order, so it is the lowest's); 0 and 0 when none is unfinished.
func (t *Tracker) Unfinished() (n int, oldest int64) {
	if t.live == 0 {
		return 0, 0
	}
	return t.live, t.at[t.head]
}

// CommitPoint returns the offset to commit, the lowest one not finished,
// and the finished spans above it.
func (t *Tracker) CommitPoint() (int64, []Span) {
	var spans []Span
	add := func(from, to int64) {
		if from >= to {
			return
		}
		if k := len(spans); k > 0 && spans[k-1].To == from {
			spans[k-1].To = to
			return
		}
		spans = append(spans, Span{From: from, To: to})
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

// Measure takes the size of the current map, for Fits: call it before each
// batch of records is taken.
func (t *Tracker) Measure() {
	base, spans := t.CommitPoint()
	t.mBase, t.mLive, t.mAdded = base, t.live, 0
	if len(spans) == 0 {
		t.mRuns = 1 + uvarintLen(uint64(max(base, 0))) + 1
		return
	}
	_, t.mRuns = sizes(base, spans)
}

// Fits reports whether the commit metadata stays within limit bytes, however
// the unfinished records finish, if offset is taken too. The bitset of every
// offset from the committed one to offset bounds it; so do the runs measured
// plus two runs for each unfinished record (finishing one splits at most one
// unfinished run in three).
func (t *Tracker) Fits(offset int64, limit int) bool {
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

// Known reports whether where the partition starts is known: Start was
// called or an offset was taken or skipped.
func (t *Tracker) Known() bool { return t.known }
