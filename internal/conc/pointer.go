package conc

import (
	"sync/atomic"
	"unsafe"
)

// Pointer is a pointer to a T that readers load without a lock (an xarray
// slot, folio->mapping, bh->b_bdev as an LRU hit reads it): Load is always
// an atomic load, and Store is atomic unless its owner is confined (see the
// package doc). The zero value is nil. A Pointer must not be copied after
// first use.
//
// The owner, not the Pointer, knows whether it is confined (an xarray's
// slots, a machine's buffer heads), so the mode is Store's argument: a
// Pointer is one word, as an array of slots needs.
type Pointer[T any] struct {
	_ noCopy
	_ [0]*T // no conversion between Pointers of different types
	p unsafe.Pointer
}

// Load returns the pointer.
func (x *Pointer[T]) Load() *T { return (*T)(atomic.LoadPointer(&x.p)) }

// Store sets the pointer to v: a plain store if confined, else an atomic
// one.
func (x *Pointer[T]) Store(v *T, confined bool) {
	if confined {
		x.p = unsafe.Pointer(v)
		return
	}
	atomic.StorePointer(&x.p, unsafe.Pointer(v))
}
