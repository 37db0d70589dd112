package freelist

import "unsafe"

// Slab hands out new objects of type T carved from arrays of a fixed
// length, one allocation per array instead of one per object: what a slab
// cache does when its free list is empty and it takes a new page. An array
// stays allocated while any of its objects is referenced; an object is
// never handed out twice, so an owner recycles it through a List. The zero
// value is ready for use.
//
// A slab that keeps growing has its next array made ahead, on a goroutine
// of its own: from the third array on, each array of at least
// prefaultBytes is allocated and its memory first written while the one
// before is handed out. A growing Go heap takes fresh pages from the
// operating system, and their first writes fault them in (zeroed by the
// host's kernel, several microseconds a page in a virtual machine); made
// ahead, those faults fall on another CPU instead of the caller's. It is
// the model's use of host memory, not anything the model counts.
//
// A Slab is not safe for concurrent use: its owner keeps it per simulated
// CPU, as it keeps the List beside it.
type Slab[T any] struct {
	rest []T // the current array's objects not yet handed out
	// arrays counts the arrays made so far, up to 2; next, once the slab
	// has grown past its second array, brings the array being made ahead.
	arrays int
	next   chan []T
}

// prefaultBytes is the least array a Slab makes ahead: below a few pages
// the goroutine costs more than the faults it moves.
const prefaultBytes = 32 << 10

// hostPage is the stride at which an array made ahead is first written:
// the smallest page a Go host has.
const hostPage = 4096

// New returns a zeroed object, starting a new array of n objects when the
// current one is used up. n must be positive and the same at every call.
// O(1); it allocates once per n objects (and, made ahead, a goroutine per
// array).
func (s *Slab[T]) New(n int) *T {
	if len(s.rest) == 0 {
		s.grow(n)
	}
	x := &s.rest[0]
	s.rest = s.rest[1:]
	return x
}

// grow makes the current array the next one: the array made ahead, or a
// new one, and starts making the one after it ahead when the slab keeps
// growing and an array is large enough for its faults to matter.
func (s *Slab[T]) grow(n int) {
	if s.next != nil {
		s.rest = <-s.next
	} else {
		s.rest = make([]T, n)
	}
	if s.arrays < 2 {
		s.arrays++
	}
	if s.arrays < 2 || uintptr(n)*unsafe.Sizeof(s.rest[0]) < prefaultBytes {
		return
	}
	if s.next == nil {
		s.next = make(chan []T, 1)
	}
	go func(next chan<- []T) {
		a := make([]T, n)
		prefault(a)
		next <- a
	}(s.next)
}

// prefault writes a zero byte into every host page of a's memory, all of
// which is zero already: the writes change nothing but fault the pages in.
// a is not yet shared (the channel's send orders these writes before any
// use of it), and a zero byte written into a zero word leaves a pointer
// nil, so neither another goroutine nor the garbage collector sees a
// change. (Viewing a []T as bytes relies on the gc toolchain's layout of
// T, not on a guarantee of unsafe's rules.)
func prefault[T any](a []T) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), uintptr(len(a))*unsafe.Sizeof(a[0]))
	for i := 0; i < len(b); i += hostPage {
		b[i] = 0
	}
}
