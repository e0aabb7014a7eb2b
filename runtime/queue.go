package runtime

import "sync"

// segSize is the number of events in one segment of a lane's queue.
const segSize = 32

// segment is a fixed-size block of a lane's queue.
type segment[E any] struct {
	items [segSize]item[E]
	next  *segment[E]
}

// segPool recycles queue segments. Each shard keeps a few at hand (under its
// lock, so no atomic operation is needed); the rest go to a sync.Pool, which
// the garbage collector trims when they stay unused. Steady-state dispatch
// therefore allocates nothing, and a burst's memory is given back.
type segPool[E any] struct {
	free   *segment[E]
	n      int
	shared *sync.Pool
}

const maxFreeSegments = 64 // per shard

func (p *segPool[E]) get() *segment[E] {
	if s := p.free; s != nil {
		p.free = s.next
		p.n--
		s.next = nil
		return s
	}
	if s, ok := p.shared.Get().(*segment[E]); ok {
		return s
	}
	return new(segment[E])
}

// put takes back a segment whose events were all popped (and so zeroed).
func (p *segPool[E]) put(s *segment[E]) {
	if p.n < maxFreeSegments {
		s.next = p.free
		p.free = s
		p.n++
		return
	}
	s.next = nil
	p.shared.Put(s)
}

// queue is a lane's FIFO of pending events: a list of segments from its
// shard's pool. Every method runs under the shard's lock.
type queue[E any] struct {
	pool       *segPool[E]
	head, tail *segment[E]
	hi, ti     int // next to pop in head, next free slot in tail
	n          int
}

func (q *queue[E]) len() int { return q.n }

func (q *queue[E]) pushBack(it item[E]) {
	if q.tail == nil {
		s := q.pool.get()
		q.head, q.tail, q.hi, q.ti = s, s, 0, 0
	} else if q.ti == segSize {
		s := q.pool.get()
		q.tail.next = s
		q.tail, q.ti = s, 0
	}
	q.tail.items[q.ti] = it
	q.ti++
	q.n++
}

// pushFront puts it before the current head.
func (q *queue[E]) pushFront(it item[E]) {
	if q.head == nil {
		s := q.pool.get()
		q.head, q.tail, q.hi, q.ti = s, s, segSize, segSize
	} else if q.hi == 0 {
		s := q.pool.get()
		s.next = q.head
		q.head, q.hi = s, segSize
	}
	q.hi--
	q.head.items[q.hi] = it
	q.n++
}

// prependAll puts its, in their order, before the current head.
func (q *queue[E]) prependAll(its []item[E]) {
	for i := len(its) - 1; i >= 0; i-- {
		q.pushFront(its[i])
	}
}

func (q *queue[E]) popFront() item[E] {
	it := q.head.items[q.hi]
	q.head.items[q.hi] = item[E]{}
	q.hi++
	q.n--
	switch {
	case q.n == 0:
		q.release()
	case q.hi == segSize:
		s := q.head
		q.head, q.hi = s.next, 0
		q.pool.put(s)
	}
	return it
}

// popInto moves up to max events from the front into dst and returns it.
func (q *queue[E]) popInto(dst []item[E], max int) []item[E] {
	for q.n > 0 && max > 0 {
		dst = append(dst, q.popFront())
		max--
	}
	return dst
}

// popWhile moves up to max events from the front into dst, stopping at the
// first for which ok is false, and returns dst.
func (q *queue[E]) popWhile(dst []item[E], max int, ok func(*item[E]) bool) []item[E] {
	for q.n > 0 && max > 0 && ok(q.front()) {
		dst = append(dst, q.popFront())
		max--
	}
	return dst
}

// front returns a pointer to the oldest event; q must not be empty.
func (q *queue[E]) front() *item[E] { return &q.head.items[q.hi] }

// back returns a pointer to the newest event; q must not be empty.
func (q *queue[E]) back() *item[E] { return &q.tail.items[q.ti-1] }

// release gives every segment back to the pool; q is empty afterwards.
func (q *queue[E]) release() {
	for s := q.head; s != nil; {
		next := s.next
		q.pool.put(s)
		s = next
	}
	q.head, q.tail, q.hi, q.ti, q.n = nil, nil, 0, 0, 0
}

// filter removes, in order, every event for which drop returns true and
// hands it to gone; it returns how many it removed. It rotates the whole
// queue once: O(n), for the rare paths (withdrawal, drop-oldest).
func (q *queue[E]) filter(drop func(*item[E]) bool, gone func(item[E])) int {
	removed := 0
	for n := q.n; n > 0; n-- {
		it := q.popFront()
		if drop(&it) {
			removed++
			gone(it)
			continue
		}
		q.pushBack(it)
	}
	return removed
}

// removeFirst removes and returns the oldest event for which match returns
// true, keeping the others in order.
func (q *queue[E]) removeFirst(match func(*item[E]) bool) (item[E], bool) {
	var found item[E]
	ok := false
	q.filter(func(it *item[E]) bool { return !ok && match(it) }, func(it item[E]) { found, ok = it, true })
	return found, ok
}
