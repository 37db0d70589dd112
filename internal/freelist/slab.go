package freelist

// Slab hands out new objects of type T carved from arrays of a fixed
// length, one allocation per array instead of one per object: what a slab
// cache does when its free list is empty and it takes a new page. An array
// stays allocated while any of its objects is referenced; an object is
// never handed out twice, so an owner recycles it through a List. The zero
// value is ready for use.
//
// A Slab is not safe for concurrent use: its owner keeps it per simulated
// CPU, as it keeps the List beside it.
type Slab[T any] struct {
	rest []T // the current array's objects not yet handed out
}

// New returns a zeroed object, starting a new array of n objects when the
// current one is used up. n must be positive. O(1); it allocates once per n
// objects.
func (s *Slab[T]) New(n int) *T {
	if len(s.rest) == 0 {
		s.rest = make([]T, n)
	}
	x := &s.rest[0]
	s.rest = s.rest[1:]
	return x
}
