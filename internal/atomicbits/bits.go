// Package atomicbits provides Bits, a set of flag bits kept in one atomic
// 32-bit word: what the kernel's set_bit, clear_bit, test_and_set_bit and
// test_and_clear_bit do on a word of flags such as folio->flags or
// bh->b_state. bhsim's BufferHead state and Folio flags are both Bits.
//
// Every operation is atomic, and every change is a single atomic
// read-modify-write of the word, so bits that different goroutines change
// never lose each other's updates. Set, Clear, TestAndSet and TestAndClear
// first load the word and skip the read-modify-write when it would change
// nothing: the result is the same as the kernel's unconditional operation,
// ordered at that load, and a locked instruction is saved on the hot paths,
// where most calls find the bit already as wanted. No operation allocates;
// each is O(1), except that Change and TestAndClearSet retry their
// compare-and-swap while other goroutines change the word.
package atomicbits

import "sync/atomic"

// Bits is an atomic set of flag bits of type T, one bit per flag (T's
// constants are powers of two, or masks of several). The zero value has no
// bit set. A Bits must not be copied after first use (it holds an
// atomic.Uint32, which go vet's copylocks check guards).
type Bits[T ~uint32] struct {
	v atomic.Uint32
}

// Load returns every bit.
func (b *Bits[T]) Load() T { return T(b.v.Load()) }

// Store replaces every bit with v (for an object not yet visible to other
// goroutines, or whose bits all change at once).
func (b *Bits[T]) Store(v T) { b.v.Store(uint32(v)) }

// Has reports whether every bit of m is set (true for m = 0).
func (b *Bits[T]) Has(m T) bool { return T(b.v.Load())&m == m }

// Any reports whether some bit of m is set.
func (b *Bits[T]) Any(m T) bool { return T(b.v.Load())&m != 0 }

// Set sets the bits of m (set_bit).
func (b *Bits[T]) Set(m T) {
	if T(b.v.Load())&m != m {
		b.v.Or(uint32(m))
	}
}

// Clear clears the bits of m (clear_bit).
func (b *Bits[T]) Clear(m T) {
	if T(b.v.Load())&m != 0 {
		b.v.And(^uint32(m))
	}
}

// TestAndSet sets the single bit bit and reports whether it was already set
// (test_and_set_bit). With a mask of several bits it sets them all and
// reports whether any was set.
func (b *Bits[T]) TestAndSet(bit T) bool {
	return T(b.v.Load())&bit != 0 || T(b.v.Or(uint32(bit)))&bit != 0
}

// TestAndClear clears the single bit bit and reports whether it was set
// (test_and_clear_bit). With a mask of several bits it clears them all if
// any was set, and reports whether one was.
func (b *Bits[T]) TestAndClear(bit T) bool {
	return T(b.v.Load())&bit != 0 && T(b.v.And(^uint32(bit)))&bit != 0
}

// Change sets the bits of set and clears those of clr in one atomic step and
// returns the bits before. It stands for a sequence of bit operations that
// no other goroutine could tell apart from a single one.
func (b *Bits[T]) Change(set, clr T) (old T) {
	for {
		o := b.v.Load()
		if b.v.CompareAndSwap(o, o&^uint32(clr)|uint32(set)) {
			return T(o)
		}
	}
}

// TestAndClearSet clears the bits of clr and sets those of set in one atomic
// step if some bit of clr is set, and reports whether one was: a
// test_and_clear_bit followed, on success, by set_bit, as one step. Nothing
// changes when no bit of clr is set.
func (b *Bits[T]) TestAndClearSet(clr, set T) bool {
	for {
		o := b.v.Load()
		if o&uint32(clr) == 0 {
			return false
		}
		if b.v.CompareAndSwap(o, o&^uint32(clr)|uint32(set)) {
			return true
		}
	}
}
