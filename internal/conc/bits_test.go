package conc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flag is a flag type as the users declare theirs.
type flag uint32

const (
	fa flag = 1 << iota
	fb
	fc
)

// forModes runs test on a fresh Bits in each mode: shared and confined. Every
// operation must give the same results in both.
func forModes(t *testing.T, test func(t *testing.T, b *Bits[flag])) {
	for _, confined := range []bool{false, true} {
		t.Run(fmt.Sprint("confined=", confined), func(t *testing.T) {
			b := new(Bits[flag])
			if confined {
				b.Confine()
			}
			test(t, b)
		})
	}
}

func TestSetClearHas(t *testing.T) {
	forModes(t, func(t *testing.T, b *Bits[flag]) {
		require.Zero(t, b.Load())
		assert.True(t, b.Has(0), "the empty mask is always set")
		b.Set(fa | fc)
		assert.Equal(t, fa|fc, b.Load())
		assert.True(t, b.Has(fa|fc))
		assert.False(t, b.Has(fa|fb), "Has wants every bit")
		assert.True(t, b.Any(fa|fb), "Any wants one")
		assert.False(t, b.Any(fb))
		b.Set(fa) // already set: nothing changes
		assert.Equal(t, fa|fc, b.Load())
		b.Clear(fb) // already clear
		assert.Equal(t, fa|fc, b.Load())
		b.Clear(fa | fb)
		assert.Equal(t, fc, b.Load())
		b.Store(fb)
		assert.Equal(t, fb, b.Load())
	})
}

func TestTestAndSetClear(t *testing.T) {
	forModes(t, func(t *testing.T, b *Bits[flag]) {
		assert.False(t, b.TestAndSet(fa), "first set")
		assert.True(t, b.TestAndSet(fa), "second set finds it")
		assert.Equal(t, fa, b.Load())
		assert.True(t, b.TestAndClear(fa))
		assert.False(t, b.TestAndClear(fa), "already clear")
		assert.Zero(t, b.Load())
		b.Set(fb)
		assert.False(t, b.TestAndSet(fa|fc), "a mask reports whether any bit was set")
		assert.Equal(t, fa|fb|fc, b.Load())
		assert.True(t, b.TestAndClear(fa|fc))
		assert.Equal(t, fb, b.Load())
	})
}

func TestChange(t *testing.T) {
	forModes(t, func(t *testing.T, b *Bits[flag]) {
		b.Store(fa | fb)
		assert.Equal(t, fa|fb, b.Change(fc, fa))
		assert.Equal(t, fb|fc, b.Load())

		assert.False(t, b.TestAndClearSet(fa, fa|fb), "fa is clear: nothing changes")
		assert.Equal(t, fb|fc, b.Load())
		assert.True(t, b.TestAndClearSet(fb, fa))
		assert.Equal(t, fa|fc, b.Load())
	})
}

// TestConfineKeepsBits: Confine keeps the bits set before it, and the
// confinement mark never shows in Load, Has or Any; Store keeps the mode.
func TestConfineKeepsBits(t *testing.T) {
	var b Bits[flag]
	b.Set(fa | fc)
	b.Confine()
	assert.Equal(t, fa|fc, b.Load())
	b.Store(fb)
	assert.Equal(t, fb, b.Load())
	assert.False(t, b.Any(^flag(fb)), "only fb")
	assert.NotZero(t, b.v&confinedBit, "Store kept the mode")
	assert.Equal(t, fb, b.Change(0, fb), "Change returns the bits without the mark")
	assert.Zero(t, b.Load())
}

// TestConcurrentBits: goroutines each flip their own bit while others
// flip theirs; no update is lost, and TestAndSet excludes like a lock. Run
// with -race.
func TestConcurrentBits(t *testing.T) {
	const workers, rounds = 8, 2000
	var b, lock Bits[flag]
	held := 0 // guarded by lock's bit fa
	var wg sync.WaitGroup
	for w := range workers {
		bit := flag(1) << (8 + w)
		wg.Go(func() {
			for i := range rounds {
				b.Set(bit)
				if !b.Has(bit) {
					t.Errorf("worker %d lost its bit", w)
					return
				}
				if i%2 == 0 {
					b.Clear(bit)
				} else {
					b.Change(0, bit)
				}
				for lock.TestAndSet(fa) {
				}
				held++
				lock.Clear(fa)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, b.Load(), "every bit was cleared by its owner")
	assert.Equal(t, workers*rounds, held, "TestAndSet excluded")
}

func TestAllocatesNothing(t *testing.T) {
	var b Bits[flag]
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		b.Set(fa)
		b.TestAndClearSet(fa, fb)
		b.Change(fc, fb)
		b.TestAndClear(fc)
	}))
}

// BenchmarkBitsSetAlreadySet measures a Set of a bit already set: a load
// only, in either mode (BenchmarkConfinement times a lock bit's round trip).
func BenchmarkBitsSetAlreadySet(b *testing.B) {
	var bits Bits[flag]
	bits.Set(fb)
	for b.Loop() {
		bits.Set(fb)
	}
}

// TestBit31IsIgnored: a mask with the confinement bit neither confines a
// shared word nor unconfines a confined one, and the bit never shows.
func TestBit31IsIgnored(t *testing.T) {
	forModes(t, func(t *testing.T, b *Bits[flag]) {
		confined := b.Confined()
		b.Store(^flag(0))
		assert.Equal(t, ^flag(0)&^confinedBit, b.Load())
		b.Clear(^flag(0))
		assert.Zero(t, b.Load())
		b.Set(^flag(0))
		b.Change(0, ^flag(0))
		assert.Zero(t, b.Load())
		assert.False(t, b.TestAndSet(flag(confinedBit)), "the bit is not a flag")
		assert.False(t, b.TestAndClear(flag(confinedBit)))
		assert.False(t, b.TestAndClearSet(flag(confinedBit), fa))
		assert.Equal(t, confined, b.Confined(), "the mode is unchanged")
	})
}

// FuzzConfinedSameAsShared applies one sequence of operations to a shared
// and to a confined Bits and Int32: every result and every final value must
// be the same. Input: two bytes per operation (operation, argument).
func FuzzConfinedSameAsShared(f *testing.F) {
	f.Add([]byte{0, 3, 1, 1, 2, 5, 3, 2, 4, 7, 5, 1, 6, 3, 7, 2, 8, 9, 9, 4})
	f.Add([]byte{2, 0xff, 3, 0xff, 4, 0x80, 9, 0xfe})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var sb, cb Bits[flag]
		var sx, cx Int32
		cb.Confine()
		cx.Confine()
		for i := 0; i+1 < len(ops); i += 2 {
			m := flag(ops[i+1]) | flag(ops[i+1])<<24 // reaches bit 31
			d := int32(int8(ops[i+1]))
			var a, b any
			switch ops[i] % 10 {
			case 0:
				sb.Set(m)
				cb.Set(m)
			case 1:
				sb.Clear(m)
				cb.Clear(m)
			case 2:
				a, b = sb.TestAndSet(m), cb.TestAndSet(m)
			case 3:
				a, b = sb.TestAndClear(m), cb.TestAndClear(m)
			case 4:
				a, b = sb.Change(m, m>>1), cb.Change(m, m>>1)
			case 5:
				a, b = sb.TestAndClearSet(m, m<<1), cb.TestAndClearSet(m, m<<1)
			case 6:
				sb.Store(m)
				cb.Store(m)
			case 7:
				a, b = sx.Add(d), cx.Add(d)
			case 8:
				a, b = sx.CompareAndSwap(d, d+1), cx.CompareAndSwap(d, d+1)
			case 9:
				sx.Store(d)
				cx.Store(d)
			}
			require.Equal(t, a, b, "operation %d", i/2)
			require.Equal(t, sb.Load(), cb.Load(), "operation %d", i/2)
			require.Equal(t, sx.Load(), cx.Load(), "operation %d", i/2)
		}
		assert.True(t, cb.Confined() && cx.Confined() && !sb.Confined() && !sx.Confined(), "modes kept")
	})
}
