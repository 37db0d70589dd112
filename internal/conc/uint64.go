package conc

import "sync/atomic"

// Uint64 is a 64-bit value stored and loaded whole, shared (atomic) by
// default, or confined (see the package doc): a position such as an md
// mirror's head_position, which any goroutine completing an I/O may store
// and submitters load. It has no read-modify-write: two goroutines storing
// at once leave one of the two values. The zero value is a shared 0. A
// Uint64 must not be copied after first use.
type Uint64 struct {
	_        [0]atomic.Int64 // 64-bit alignment for v, which 32-bit platforms' atomics need
	v        uint64
	confined bool
	_        noCopy
}

// Confine makes x confined: one goroutine at a time uses it from now on.
// It keeps x's value. Call it before x is shared.
func (x *Uint64) Confine() { x.confined = true }

// Confined reports whether x is confined.
func (x *Uint64) Confined() bool { return x.confined }

// Load returns the value.
func (x *Uint64) Load() uint64 {
	if x.confined {
		return x.v
	}
	return atomic.LoadUint64(&x.v)
}

// Store sets the value to v: a plain store when confined, an atomic one
// (a locked exchange on amd64) when shared.
func (x *Uint64) Store(v uint64) {
	if x.confined {
		x.v = v
		return
	}
	atomic.StoreUint64(&x.v, v)
}
