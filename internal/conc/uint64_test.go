package conc

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUint64 runs the same sequence on a shared and a confined value: the
// results must be the same.
func TestUint64(t *testing.T) {
	for _, confined := range []bool{false, true} {
		t.Run(fmt.Sprint("confined=", confined), func(t *testing.T) {
			var x Uint64
			require.Zero(t, x.Load())
			x.Store(1 << 40)
			if confined {
				x.Confine()
			}
			require.Equal(t, confined, x.Confined())
			assert.Equal(t, uint64(1<<40), x.Load(), "Confine keeps the value")
			x.Store(^uint64(0))
			assert.Equal(t, ^uint64(0), x.Load())
			x.Store(7)
			assert.Equal(t, uint64(7), x.Load())
		})
	}
}

// TestUint64Aligned: v is 8-byte aligned wherever a Uint64 sits, even after
// a 4-byte field in a slice element, as 32-bit platforms' 64-bit atomics
// require (they panic on an unaligned word; GOARCH=386 go test shows it).
func TestUint64Aligned(t *testing.T) {
	type pair struct {
		_ Int32 // four bytes before x
		x Uint64
	}
	ps := make([]pair, 3)
	for i := range ps {
		assert.Zero(t, uintptr(unsafe.Pointer(&ps[i].x.v))%8, "element %d", i)
		ps[i].x.Store(uint64(i) << 33) // panics on 386 if unaligned
	}
}

// TestUint64Shared: goroutines storing and loading a shared Uint64 at once
// see only whole values that were stored (run with -race: no data race).
func TestUint64Shared(t *testing.T) {
	var x Uint64
	const a, b = 0x0123456789abcdef, 0xfedcba9876543210
	var wg sync.WaitGroup
	bad := make(chan uint64, 1)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				if (g+i)%2 == 0 {
					x.Store(a)
				} else {
					x.Store(b)
				}
				if v := x.Load(); v != a && v != b {
					select {
					case bad <- v:
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	for v := range bad {
		t.Errorf("loaded %#x, never stored", v)
	}
}
