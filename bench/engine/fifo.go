package engine

// fifo is a first-in, first-out queue over one slice: the live items are
// from head on. The spent front is dropped when the queue empties, or
// copied out once it is over 1024 items and outweighs the live ones, so a
// long run's queue stays the size of what is in flight and allocates
// nothing once it has grown to that.
type fifo[T any] struct {
	items []T
	head  int
}

// push appends v. Amortised O(1).
func (q *fifo[T]) push(v T) { q.items = append(q.items, v) }

// live returns the items not yet popped, oldest first (a view: valid until
// the next push or pop).
func (q *fifo[T]) live() []T { return q.items[q.head:] }

// empty reports whether no item is live.
func (q *fifo[T]) empty() bool { return q.head == len(q.items) }

// front returns the oldest live item in place (the queue not empty; valid
// until the next push or pop).
func (q *fifo[T]) front() *T { return &q.items[q.head] }

// back returns the newest live item in place (the queue not empty; valid
// until the next push or pop).
func (q *fifo[T]) back() *T { return &q.items[len(q.items)-1] }

// pop removes and returns the oldest live item (the queue not empty).
// Amortised O(1).
func (q *fifo[T]) pop() T {
	v := q.items[q.head]
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = q.items[:copy(q.items, q.items[q.head:])]
		q.head = 0
	}
	return v
}
