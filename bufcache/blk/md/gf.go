package md

import "encoding/binary"

// gfPoly is the field polynomial of the kernel's raid6 library:
// x^8 + x^4 + x^3 + x^2 + 1 (0x11d), with generator g = 2 (lib/raid6).
const gfPoly = 0x11d

// gfMulTable[a][b] is a·b in GF(2^8), and gfPow[k] is g^k. They are built once
// from powers of the generator (log/antilog), the way lib/raid6's mktables
// generates its tables at build time.
var gfMulTable, gfPow = buildGF()

// buildGF returns the multiplication table and the powers of 2 in GF(2^8).
func buildGF() (*[256][256]byte, [255]byte) {
	var pow [255]byte
	var log [256]int
	x := 1
	for i := range pow {
		pow[i] = byte(x)
		log[x] = i
		x <<= 1
		if x&0x100 != 0 {
			x ^= gfPoly
		}
	}
	mul := new([256][256]byte)
	for a := 1; a < 256; a++ {
		for b := 1; b < 256; b++ {
			mul[a][b] = pow[(log[a]+log[b])%255]
		}
	}
	return mul, pow
}

// mul2x8 multiplies each of the eight bytes of w by g = 2 in GF(2^8): shift every
// byte left and reduce the bytes whose top bit fell out by 0x1d. This lane-wise
// form is the idea behind lib/raid6's integer (int64) syndrome code.
func mul2x8(w uint64) uint64 {
	const high, low = 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	carry := (w & high) >> 7
	return (w&low)<<1 ^ carry*(gfPoly&0xff)
}

// genSyndrome computes P = D0 ⊕ D1 ⊕ … and Q = g^0·D0 ⊕ g^1·D1 ⊕ … over the data
// units in stripe order, by Horner's rule from the last unit, eight bytes at a
// time: raid6_call.gen_syndrome (lib/raid6, v5.10). p, q and every data unit have
// the same length, a multiple of 8; len(data) ≥ 1. O(len(data)·len(p)).
func genSyndrome(p, q []byte, data [][]byte) {
	copy(p, data[len(data)-1])
	copy(q, data[len(data)-1])
	for k := len(data) - 2; k >= 0; k-- {
		d := data[k][:len(p)]
		for i := 0; i+8 <= len(d); i += 8 {
			w := binary.LittleEndian.Uint64(d[i:])
			binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^w)
			binary.LittleEndian.PutUint64(q[i:], mul2x8(binary.LittleEndian.Uint64(q[i:]))^w)
		}
	}
}

// xorSyndrome folds data unit k's bytes d into P and Q: P ⊕= d, Q ⊕= g^k·d.
// Applied to the old contents it removes them from the parity, applied to the new
// contents it adds them: raid6_call.xor_syndrome, the read-modify-write half of
// lib/raid6 (v4.1+). p, q and d have the same length. O(len(d)).
func xorSyndrome(p, q, d []byte, k int) {
	row := &gfMulTable[gfPow[k]]
	for i, b := range d {
		p[i] ^= b
		q[i] ^= row[b]
	}
}
