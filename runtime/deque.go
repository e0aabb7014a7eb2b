package runtime

import "sync"

// deque is a worker's list of ready lanes. The owner takes from the front;
// thieves take half from the back. A mutex is enough: the owner's lock is
// uncontended unless a thief is at work.
type deque[K comparable, E any] struct {
	// mu guards q.
	mu sync.Mutex
	q  ring[*lane[K, E]]
}

func (d *deque[K, E]) popFront() *lane[K, E] {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.q.len() == 0 {
		return nil
	}
	return d.q.popFront()
}

// pushAll appends ls and returns the deque's new length.
func (d *deque[K, E]) pushAll(ls []*lane[K, E]) int {
	d.mu.Lock()
	for _, l := range ls {
		d.q.pushBack(l)
	}
	n := d.q.len()
	d.mu.Unlock()
	return n
}

// stealHalf moves the back half (at least one) of d's lanes to thief, in
// order, using scratch as a buffer. It reports whether it moved any.
func (d *deque[K, E]) stealHalf(thief *deque[K, E], scratch *[]*lane[K, E]) bool {
	d.mu.Lock()
	n := (d.q.len() + 1) / 2
	if n == 0 {
		d.mu.Unlock()
		return false
	}
	stolen := (*scratch)[:0]
	for range n {
		stolen = append(stolen, d.q.popBack())
	}
	d.mu.Unlock()
	for i, j := 0, len(stolen)-1; i < j; i, j = i+1, j-1 {
		stolen[i], stolen[j] = stolen[j], stolen[i]
	}
	thief.pushAll(stolen)
	clear(stolen)
	*scratch = stolen[:0]
	return true
}

// len returns the number of lanes in d.
func (d *deque[K, E]) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.q.len()
}
