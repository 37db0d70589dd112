package conc

import "sync/atomic"

// Bits is a set of flag bits of type T in one 32-bit word, one bit per flag
// (T's constants are powers of two, or masks of several, below bit 31): what
// the kernel's set_bit, clear_bit, test_and_set_bit and test_and_clear_bit
// do on a word of flags such as folio->flags or bh->b_state. The zero value
// has no bit set and is shared (atomic). A Bits must not be copied after
// first use.
//
// Shared, every change is a single atomic read-modify-write of the word, so
// bits that different goroutines change never lose each other's updates.
// Set, Clear, TestAndSet and TestAndClear first load the word and skip the
// read-modify-write when it would change nothing: the result is the same as
// the kernel's unconditional operation, ordered at that load, and a locked
// instruction is saved on the hot paths, where most calls find the bit
// already as wanted. Confined (see the package doc), the changes are plain
// stores.
//
// Bit 31 is the word's own: it marks a confined Bits. No flag may use it,
// and every operation ignores it in its arguments, so a mask such as ^0
// neither confines a shared word nor unconfines a confined one.
type Bits[T ~uint32] struct {
	_ noCopy
	v uint32
}

// confinedBit marks a confined Bits in its own word.
const confinedBit = 1 << 31

// Confine makes b confined: one goroutine at a time uses it from now on
// (see the package doc). It keeps b's bits. Call it before b is shared.
func (b *Bits[T]) Confine() { b.v |= confinedBit }

// Confined reports whether b is confined.
func (b *Bits[T]) Confined() bool { return b.word()&confinedBit != 0 }

// flags is m without the confinement bit.
func flags[T ~uint32](m T) uint32 { return uint32(m) &^ confinedBit }

// word loads the whole word, the confinement mark included.
func (b *Bits[T]) word() uint32 { return atomic.LoadUint32(&b.v) }

// Load returns every bit.
func (b *Bits[T]) Load() T { return T(b.word() &^ confinedBit) }

// Store replaces every bit with v (for an object not yet visible to other
// goroutines, or whose bits all change at once). It keeps b's mode.
func (b *Bits[T]) Store(v T) {
	w := b.word()
	if w&confinedBit != 0 {
		b.v = flags(v) | confinedBit
		return
	}
	atomic.StoreUint32(&b.v, flags(v))
}

// Has reports whether every bit of m is set (true for m = 0).
func (b *Bits[T]) Has(m T) bool { return b.Load()&m == m }

// Any reports whether some bit of m is set.
func (b *Bits[T]) Any(m T) bool { return b.Load()&m != 0 }

// Set sets the bits of m (set_bit).
func (b *Bits[T]) Set(m T) {
	m = T(flags(m))
	w := b.word()
	switch {
	case T(w)&m == m:
	case w&confinedBit != 0:
		b.v = w | uint32(m)
	default:
		atomic.OrUint32(&b.v, uint32(m))
	}
}

// Clear clears the bits of m (clear_bit).
func (b *Bits[T]) Clear(m T) {
	m = T(flags(m))
	w := b.word()
	switch {
	case T(w)&m == 0:
	case w&confinedBit != 0:
		b.v = w &^ uint32(m)
	default:
		atomic.AndUint32(&b.v, ^uint32(m))
	}
}

// TestAndSet sets the single bit bit and reports whether it was already set
// (test_and_set_bit). With a mask of several bits it sets them all and
// reports whether any was set.
func (b *Bits[T]) TestAndSet(bit T) bool {
	bit = T(flags(bit))
	w := b.word()
	switch {
	case T(w)&bit == bit:
		return bit != 0
	case w&confinedBit != 0:
		b.v = w | uint32(bit)
		return T(w)&bit != 0
	}
	return T(atomic.OrUint32(&b.v, uint32(bit)))&bit != 0
}

// TestAndClear clears the single bit bit and reports whether it was set
// (test_and_clear_bit). With a mask of several bits it clears them all if
// any was set, and reports whether one was.
func (b *Bits[T]) TestAndClear(bit T) bool {
	bit = T(flags(bit))
	w := b.word()
	switch {
	case T(w)&bit == 0:
		return false
	case w&confinedBit != 0:
		b.v = w &^ uint32(bit)
		return true
	}
	return T(atomic.AndUint32(&b.v, ^uint32(bit)))&bit != 0
}

// Change sets the bits of set and clears those of clr in one atomic step and
// returns the bits before. It stands for a sequence of bit operations that
// no other goroutine could tell apart from a single one.
func (b *Bits[T]) Change(set, clr T) (old T) {
	set, clr = T(flags(set)), T(flags(clr))
	for {
		o := b.word()
		n := o&^uint32(clr) | uint32(set)
		if o&confinedBit != 0 {
			b.v = n
			return T(o &^ confinedBit)
		}
		if atomic.CompareAndSwapUint32(&b.v, o, n) {
			return T(o)
		}
	}
}

// TestAndClearSet clears the bits of clr and sets those of set in one atomic
// step if some bit of clr is set, and reports whether one was: a
// test_and_clear_bit followed, on success, by set_bit, as one step. Nothing
// changes when no bit of clr is set.
func (b *Bits[T]) TestAndClearSet(clr, set T) bool {
	set, clr = T(flags(set)), T(flags(clr))
	for {
		o := b.word()
		if o&uint32(clr) == 0 {
			return false
		}
		n := o&^uint32(clr) | uint32(set)
		if o&confinedBit != 0 {
			b.v = n
			return true
		}
		if atomic.CompareAndSwapUint32(&b.v, o, n) {
			return true
		}
	}
}
