package md

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGFTables checks the multiplication table and the generator's powers
// against the bitwise reference multiply.
func TestGFTables(t *testing.T) {
	for a := range 256 {
		for b := range 256 {
			if got, want := gfMulTable[a][b], gfMulSlow(byte(a), byte(b)); got != want {
				require.Equal(t, want, got, "%#x·%#x", a, b)
			}
		}
	}
	seen := map[byte]bool{}
	x := byte(1)
	for k, p := range gfPow {
		assert.Equal(t, x, p, "g^%d", k)
		seen[p] = true
		x = gfMulSlow(x, 2)
	}
	assert.Len(t, seen, 255, "g = 2 generates every non-zero element")
	assert.Equal(t, byte(1), x, "g^255 = 1")
}

// TestMul2x8 checks the eight-lane doubling against the reference.
func TestMul2x8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range append([]uint64{0, ^uint64(0), 0x8080808080808080, 0x0102040810204080}, rng.Uint64(), rng.Uint64(), rng.Uint64()) {
		var in, want [8]byte
		binary.LittleEndian.PutUint64(in[:], w)
		for i, b := range in {
			want[i] = gfMulSlow(b, 2)
		}
		var got [8]byte
		binary.LittleEndian.PutUint64(got[:], mul2x8(w))
		assert.Equal(t, want, got, "%#x", w)
	}
}

// syndromeSlow computes P and Q of data byte by byte with the reference multiply.
func syndromeSlow(data [][]byte) (p, q []byte) {
	p, q = make([]byte, len(data[0])), make([]byte, len(data[0]))
	coef := byte(1)
	for _, d := range data {
		for i, b := range d {
			p[i] ^= b
			q[i] ^= gfMulSlow(coef, b)
		}
		coef = gfMulSlow(coef, 2)
	}
	return p, q
}

// TestSyndrome checks gen_syndrome against the reference for several data
// widths, and that folding a unit's old and new contents into P and Q with
// xorSyndrome gives the syndrome of the new data.
func TestSyndrome(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nd := range []int{1, 2, 3, 5, 16, 255} {
		t.Run(fmt.Sprintf("data=%d", nd), func(t *testing.T) {
			data := make([][]byte, nd)
			for k := range data {
				data[k] = fill(rng, 64)
			}
			p, q := make([]byte, 64), make([]byte, 64)
			genSyndrome(p, q, data)
			wantP, wantQ := syndromeSlow(data)
			assert.Equal(t, wantP, p, "P")
			assert.Equal(t, wantQ, q, "Q")

			k := rng.IntN(nd)
			lo, hi := 8, 40 // a partial update, as a sub-page write makes
			xorSyndrome(p[lo:hi], q[lo:hi], data[k][lo:hi], k)
			copy(data[k][lo:hi], fill(rng, hi-lo))
			xorSyndrome(p[lo:hi], q[lo:hi], data[k][lo:hi], k)
			wantP, wantQ = syndromeSlow(data)
			assert.Equal(t, wantP, p, "P after rmw of unit %d", k)
			assert.Equal(t, wantQ, q, "Q after rmw of unit %d", k)
		})
	}
}
