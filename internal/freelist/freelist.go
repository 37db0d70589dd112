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
// warmest. It holds pointers. Get does not clear the slot it empties (a
// pointer store costs a write-barrier check on a hot path), so the list's
// spare capacity may still point at objects it handed out; they are in use,
// and the next Put overwrites the slot.
//
// A List has no bound of its own: an owner that keeps at most n objects
// tests len before Put, with n a constant of its own. Kept this small, Put
// and Get cost the inliner what the hand-written stacks did, so the model's
// hot paths that free an object (folio_put) stay inlined.
//
// Slab is where new objects come from when a List is empty: it carves them
// from arrays, one allocation per array, as a slab cache takes a new page —
// a page cache filling up allocates once per 64 buffer heads or folios.
package freelist

// List is a stack of free objects of type T: a slice of pointers, so that
// an owner reads its length with len. The zero value is an empty list.
//
// A List is not safe for concurrent use: its owner keeps it per simulated
// CPU, or guards it with the lock of the objects it recycles. The caller
// resets an object (to its zero state, or whatever state Get's callers
// expect) before Put or after Get.
type List[T any] []*T

// Get removes and returns the object put last, or nil if the list is empty.
// O(1); it does not allocate.
func (l *List[T]) Get() *T {
	s := *l
	n := len(s)
	if n == 0 {
		return nil
	}
	*l = s[:n-1]
	return s[n-1]
}

// Put adds x to the list. x must not be nil, nor already on the list.
// Amortised O(1); it allocates only when the list grows past the largest
// length it has had.
func (l *List[T]) Put(x *T) { *l = append(*l, x) }
