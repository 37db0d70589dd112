package conc

import "sync/atomic"

// Int32 is a 32-bit counter, shared (atomic) by default, or confined (see the
// package doc): the atomic_t of a reference count (folio->_refcount,
// bh->b_count) or of an I/O count (an md bio's pending count). The zero
// value is a shared 0. An Int32 must not be copied after first use.
type Int32 struct {
	_        noCopy
	v        int32
	confined bool
}

// Confine makes x confined: one goroutine at a time uses it from now on.
// It keeps x's value. Call it before x is shared.
func (x *Int32) Confine() { x.confined = true }

// Confined reports whether x is confined.
func (x *Int32) Confined() bool { return x.confined }

// Load returns the value.
func (x *Int32) Load() int32 { return atomic.LoadInt32(&x.v) }

// Store sets the value to v.
func (x *Int32) Store(v int32) {
	if x.confined {
		x.v = v
		return
	}
	atomic.StoreInt32(&x.v, v)
}

// Add adds d and returns the new value.
func (x *Int32) Add(d int32) int32 {
	if x.confined {
		x.v += d
		return x.v
	}
	return atomic.AddInt32(&x.v, d)
}

// CompareAndSwap sets the value to new if it is old, and reports whether it
// did.
func (x *Int32) CompareAndSwap(old, new int32) bool {
	if x.confined {
		if x.v != old {
			return false
		}
		x.v = new
		return true
	}
	return atomic.CompareAndSwapInt32(&x.v, old, new)
}
