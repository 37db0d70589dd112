// Package freelist provides List, the one free list of recycled objects that
// bhsim keeps wherever the kernel takes an object from a slab cache or a
// pool and gives it back when done: a CPU's buffer_heads, folios and bios
// (the per-CPU parts of the slabs and of the page allocator), a request
// queue's requests (its tag set), and md's requests, stripe_heads, stripe
// lists and handler batches. Reusing them keeps the simulation's hot paths
// free of allocations once warm.
//
// A List is a stack: the object put last is taken first, as a slab's
// per-CPU array hands out the object freed last, whose memory is the
// warmest. It holds pointers, and forgets each one it hands out, so a List
// never keeps an object alive that a caller took from it.
package freelist

// List is a stack of free objects of type T. The zero value is an empty list
// without a bound; Bounded makes one that keeps a limited number.
//
// A List is not safe for concurrent use: its owner keeps it per simulated
// CPU, or guards it with the lock of the objects it recycles. The caller
// resets an object (to its zero state, or whatever state Get's callers
// expect) before Put or after Get.
type List[T any] struct {
	items []*T
	max   int // 0: no bound
}

// Bounded returns an empty list that keeps at most max objects; Put leaves
// the ones beyond to the garbage collector. max must be positive.
func Bounded[T any](max int) List[T] {
	if max <= 0 {
		panic("freelist: bound must be positive")
	}
	return List[T]{max: max}
}

// Get removes and returns the object put last, or nil if the list is empty.
// O(1); it does not allocate.
func (l *List[T]) Get() *T {
	n := len(l.items)
	if n == 0 {
		return nil
	}
	x := l.items[n-1]
	l.items[n-1] = nil
	l.items = l.items[:n-1]
	return x
}

// Put adds x to the list, unless the list is bounded and full: then x is
// left to the garbage collector. x must not be nil, nor already on the
// list. Amortised O(1); it allocates only when the list grows past the
// largest length it has had.
func (l *List[T]) Put(x *T) {
	if l.max == 0 || len(l.items) < l.max {
		l.items = append(l.items, x)
	}
}

// Len returns the number of objects on the list. O(1).
func (l *List[T]) Len() int { return len(l.items) }
