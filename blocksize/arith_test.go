package blocksize_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

func TestIsPowerOfTwo(t *testing.T) {
	tests := []struct {
		x    int64
		want bool
	}{
		{math.MinInt64, false},
		{-4, false},
		{-1, false},
		{0, false},
		{1, true},
		{2, true},
		{3, false},
		{512, true},
		{1000, false},
		{4096, true},
		{1 << 62, true},
		{1<<62 + 1, false},
		{math.MaxInt64, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, blocksize.IsPowerOfTwo(tt.x), "IsPowerOfTwo(%d)", tt.x)
	}
	assert.True(t, blocksize.IsPowerOfTwo(uint64(1)<<63))
	assert.False(t, blocksize.IsPowerOfTwo(uint64(math.MaxUint64)))
	assert.True(t, blocksize.IsPowerOfTwo(uint8(128)))
	assert.False(t, blocksize.IsPowerOfTwo(uint8(0)))
}

func TestLog2(t *testing.T) {
	tests := []struct {
		x    uint64
		want uint
	}{
		{1, 0},
		{2, 1},
		{512, 9},
		{4096, 12},
		{65536, 16},
		{1 << 40, 40},
		{1 << 63, 63},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, blocksize.Log2(tt.x), "Log2(%d)", tt.x)
	}
	assert.Equal(t, uint(30), blocksize.Log2(int32(1<<30)))
}

func TestLog2Panics(t *testing.T) {
	for _, x := range []int{0, -8, 3, 1000} {
		assert.Panics(t, func() { blocksize.Log2(x) }, "Log2(%d)", x)
	}
}

func TestAlign(t *testing.T) {
	tests := []struct {
		x, a       int64
		down, up   int64
		divRoundUp int64
	}{
		{0, 512, 0, 0, 0},
		{1, 512, 0, 512, 1},
		{511, 512, 0, 512, 1},
		{512, 512, 512, 512, 1},
		{513, 512, 512, 1024, 2},
		{4097, 4096, 4096, 8192, 2},
		{7, 1, 7, 7, 7},
		{-1, 4, -4, 0, 0},
		{-4, 4, -4, -4, -1},
		{-5, 4, -8, -4, -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.down, blocksize.AlignDown(tt.x, tt.a), "AlignDown(%d, %d)", tt.x, tt.a)
		assert.Equal(t, tt.up, blocksize.AlignUp(tt.x, tt.a), "AlignUp(%d, %d)", tt.x, tt.a)
		assert.Equal(t, tt.divRoundUp, blocksize.DivRoundUp(tt.x, tt.a), "DivRoundUp(%d, %d)", tt.x, tt.a)
	}
}

func TestAlignUpWraps(t *testing.T) {
	// Like the kernel's ALIGN, the result wraps when it does not fit.
	assert.Equal(t, uint8(0), blocksize.AlignUp(uint8(255), uint8(4)))
	assert.Equal(t, uint64(0), blocksize.AlignUp(uint64(math.MaxUint64), uint64(4096)))
}

func TestAlignPanicsOnBadAlignment(t *testing.T) {
	for _, a := range []int{0, -4, 3, 1000} {
		assert.Panics(t, func() { blocksize.AlignDown(10, a) }, "AlignDown(10, %d)", a)
		assert.Panics(t, func() { blocksize.AlignUp(10, a) }, "AlignUp(10, %d)", a)
	}
}

func TestDivRoundUp(t *testing.T) {
	tests := []struct {
		x, d, want int64
	}{
		{0, 3, 0},
		{1, 3, 1},
		{3, 3, 1},
		{4, 3, 2},
		{-4, 3, -1},
		{4, -3, -1},
		{-4, -3, 2},
		{-3, -3, 1},
		{math.MaxInt64, 2, math.MaxInt64/2 + 1},
		{math.MaxInt64, math.MaxInt64, 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, blocksize.DivRoundUp(tt.x, tt.d), "DivRoundUp(%d, %d)", tt.x, tt.d)
	}
	// No overflow near the top of an unsigned range, unlike (x + d - 1) / d.
	assert.Equal(t, uint64(1)<<63, blocksize.DivRoundUp(uint64(math.MaxUint64), 2))
	assert.Equal(t, uint8(85), blocksize.DivRoundUp(uint8(254), 3))
	assert.Equal(t, uint8(128), blocksize.DivRoundUp(uint8(255), 2))
}

// FuzzArith checks AlignDown, AlignUp and DivRoundUp on int64 against exact
// big.Int arithmetic.
func FuzzArith(f *testing.F) {
	f.Add(int64(0), uint8(9), int64(3))
	f.Add(int64(4097), uint8(12), int64(4096))
	f.Add(int64(-5), uint8(2), int64(-3))
	f.Add(int64(math.MaxInt64), uint8(62), int64(1))
	f.Add(int64(math.MinInt64), uint8(0), int64(-1))
	f.Fuzz(func(t *testing.T, x int64, shift uint8, d int64) {
		a := int64(1) << (shift % 63)
		bx, ba := big.NewInt(x), big.NewInt(a)

		// Floor division by a power of two; big.Int.Div is Euclidean, which
		// equals floor for a positive divisor.
		wantDown := new(big.Int).Mul(new(big.Int).Div(bx, ba), ba)
		require.True(t, wantDown.IsInt64())
		down := blocksize.AlignDown(x, a)
		assert.Equal(t, wantDown.Int64(), down)

		wantUp := new(big.Int).Set(wantDown)
		if wantDown.Cmp(bx) != 0 {
			wantUp.Add(wantUp, ba)
		}
		if wantUp.IsInt64() {
			assert.Equal(t, wantUp.Int64(), blocksize.AlignUp(x, a))
		}

		if d == 0 || (x == math.MinInt64 && d == -1) {
			return // division by zero panics; MinInt64 / -1 overflows
		}
		bd := big.NewInt(d)
		q, m := new(big.Int).QuoRem(bx, bd, new(big.Int)) // truncated
		if m.Sign() != 0 && (m.Sign() > 0) == (bd.Sign() > 0) {
			q.Add(q, big.NewInt(1))
		}
		assert.Equal(t, q.Int64(), blocksize.DivRoundUp(x, d), "DivRoundUp(%d, %d)", x, d)
	})
}
