package blocksize

import (
	"math/bits"

	"golang.org/x/exp/constraints"
)

// IsPowerOfTwo reports whether x is a power of two. It models the kernel's
// is_power_of_2() (include/linux/log2.h, v5.10) and is false for x <= 0.
// O(1).
func IsPowerOfTwo[T constraints.Integer](x T) bool {
	return x > 0 && x&(x-1) == 0
}

// Log2 returns log2 of x. It models ilog2() (include/linux/log2.h, v5.10) for
// the power-of-two arguments the block layer passes it.
//
// Precondition: x is a power of two (x > 0). Log2 is for values the package
// has already validated; it panics otherwise, because a caller reaching it
// with a bad value has broken an internal invariant. O(1).
func Log2[T constraints.Integer](x T) uint {
	if !IsPowerOfTwo(x) {
		panic("blocksize: Log2 of a value that is not a power of two")
	}
	return uint(bits.TrailingZeros64(uint64(x)))
}

// AlignDown rounds x down to a multiple of a (towards minus infinity for
// negative x). It models the kernel's ALIGN_DOWN() / round_down() macros
// (v5.10).
//
// Precondition: a is a power of two; AlignDown panics otherwise (internal
// use, like Log2). O(1).
func AlignDown[T constraints.Integer](x, a T) T {
	return x &^ alignMask(a)
}

// AlignUp rounds x up to a multiple of a. It models the kernel's ALIGN() /
// round_up() macros (v5.10): like them it wraps around when the aligned value
// does not fit in T.
//
// Precondition: a is a power of two; AlignUp panics otherwise (internal use,
// like Log2). O(1).
func AlignUp[T constraints.Integer](x, a T) T {
	m := alignMask(a)
	return (x + m) &^ m
}

// alignMask returns a-1 for a power of two a and panics otherwise.
func alignMask[T constraints.Integer](a T) T {
	if !IsPowerOfTwo(a) {
		panic("blocksize: alignment that is not a power of two")
	}
	return a - 1
}

// DivRoundUp returns x/d rounded towards plus infinity. It models the
// kernel's DIV_ROUND_UP() macro (v5.10), but does not overflow for x near the
// top of T's range (the kernel's (x + d - 1) / d form does) and is also exact
// for negative operands.
//
// Precondition: d != 0 (a zero divisor panics, as Go's integer division
// does). O(1).
func DivRoundUp[T constraints.Integer](x, d T) T {
	q := x / d
	if x%d != 0 && (x < 0) == (d < 0) {
		q++
	}
	return q
}
