package runtime

// ring is a FIFO of T on a power-of-two circular buffer. It grows as needed
// and never shrinks; lanes that are recycled drop buffers that grew large.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) grow() {
	size := len(r.buf) * 2
	if size == 0 {
		size = 4
	}
	buf := make([]T, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}

func (r *ring[T]) pushBack(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// pushFront puts v before the current head.
func (r *ring[T]) pushFront(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.head = (r.head - 1) & (len(r.buf) - 1)
	r.buf[r.head] = v
	r.n++
}

// prependAll puts vs, in their order, before the current head.
func (r *ring[T]) prependAll(vs []T) {
	for i := len(vs) - 1; i >= 0; i-- {
		r.pushFront(vs[i])
	}
}

func (r *ring[T]) popFront() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

// popBack removes and returns the newest element; r must not be empty.
func (r *ring[T]) popBack() T {
	var zero T
	i := (r.head + r.n - 1) & (len(r.buf) - 1)
	v := r.buf[i]
	r.buf[i] = zero
	r.n--
	return v
}

// front returns a pointer to the oldest element; r must not be empty.
func (r *ring[T]) front() *T { return &r.buf[r.head] }

// back returns a pointer to the newest element; r must not be empty.
func (r *ring[T]) back() *T { return &r.buf[(r.head+r.n-1)&(len(r.buf)-1)] }

// popInto moves up to max elements from the front into dst and returns it.
func (r *ring[T]) popInto(dst []T, max int) []T {
	for r.n > 0 && max > 0 {
		dst = append(dst, r.popFront())
		max--
	}
	return dst
}

// reset empties r, dropping a buffer larger than keep elements.
func (r *ring[T]) reset(keep int) {
	if len(r.buf) > keep {
		r.buf = nil
	} else {
		clear(r.buf)
	}
	r.head, r.n = 0, 0
}
