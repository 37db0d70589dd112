package conc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInt32 runs the same sequence on a shared and a confined counter: the
// results must be the same.
func TestInt32(t *testing.T) {
	for _, confined := range []bool{false, true} {
		t.Run(fmt.Sprint("confined=", confined), func(t *testing.T) {
			var x Int32
			x.Store(2)
			if confined {
				x.Confine()
			}
			require.Equal(t, int32(2), x.Load(), "Confine keeps the value")
			assert.Equal(t, int32(3), x.Add(1))
			assert.Equal(t, int32(1), x.Add(-2))
			assert.False(t, x.CompareAndSwap(0, 5), "the value is 1, not 0")
			assert.Equal(t, int32(1), x.Load())
			assert.True(t, x.CompareAndSwap(1, 7))
			assert.Equal(t, int32(7), x.Load())
			x.Store(-1)
			assert.Equal(t, int32(-1), x.Load())
		})
	}
}

// TestConfinedLocksCheckTheirUse: a confined lock taken twice, or released
// while free, panics (on one goroutine the first would never return).
func TestConfinedLocksCheckTheirUse(t *testing.T) {
	var m Mutex
	m.Confine()
	m.Lock()
	assert.PanicsWithValue(t, "conc: Lock of a confined Mutex its goroutine holds", m.Lock)
	m.Unlock()
	assert.PanicsWithValue(t, "conc: Unlock of an unlocked confined Mutex", m.Unlock)
	m.Lock() // usable again after a correct release
	assert.PanicsWithValue(t, "conc: Lock of a confined Mutex its goroutine holds", m.Lock, "and held again")
	m.Unlock()

	var l SpinLock
	l.Confine()
	l.Lock()
	assert.True(t, l.Locked())
	assert.False(t, l.TryLock(), "held")
	assert.PanicsWithValue(t, "conc: Lock of a confined SpinLock its goroutine holds", l.Lock)
	l.Unlock()
	assert.False(t, l.Locked())
	assert.PanicsWithValue(t, "conc: unlock of unlocked lock", l.Unlock)
	assert.True(t, l.TryLock())
	l.Unlock()
}

// TestMutualExclusion: goroutines, more than the processors, increment a
// counter under a shared lock, and a shared Int32; no increment is lost. Run
// with -race: the locks' atomics must order the critical sections for the
// race detector too.
func TestMutualExclusion(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    sync.Locker
	}{{"Mutex", new(Mutex)}, {"SpinLock", new(SpinLock)}} {
		t.Run(tc.name, func(t *testing.T) {
			const workers, rounds = 8, 2000
			var x Int32
			n := 0
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range rounds {
						tc.l.Lock()
						n++
						tc.l.Unlock()
						x.Add(1)
					}
				})
			}
			wg.Wait()
			assert.Equal(t, workers*rounds, n)
			assert.Equal(t, int32(workers*rounds), x.Load())
		})
	}
}

// TestConfinedAllocatesNothing: no operation of either mode allocates.
func TestConfinedAllocatesNothing(t *testing.T) {
	for _, confined := range []bool{false, true} {
		var m Mutex
		var l SpinLock
		var x Int32
		if confined {
			m.Confine()
			l.Confine()
			x.Confine()
		}
		n := 0
		assert.Zero(t, testing.AllocsPerRun(100, func() {
			m.Lock()
			n++
			m.Unlock()
			l.Lock()
			n++
			l.Unlock()
			x.Add(1)
			x.CompareAndSwap(1, 2)
		}), "confined=%v", confined)
	}
}

// BenchmarkConfinement measures a lock round trip and a counter increment in
// each mode: what confining a machine's objects saves per operation.
func BenchmarkConfinement(b *testing.B) {
	for _, confined := range []bool{false, true} {
		var m Mutex
		var l SpinLock
		var x Int32
		var bits Bits[flag]
		if confined {
			m.Confine()
			l.Confine()
			x.Confine()
			bits.Confine()
		}
		mode := fmt.Sprint("confined=", confined)
		b.Run("op=mutex/"+mode, func(b *testing.B) {
			for b.Loop() {
				m.Lock()
				//lint:ignore SA2001 the empty critical section is the point: this times the lock itself
				m.Unlock()
			}
		})
		b.Run("op=spin/"+mode, func(b *testing.B) {
			for b.Loop() {
				l.Lock()
				//lint:ignore SA2001 the empty critical section is the point: this times the lock itself
				l.Unlock()
			}
		})
		b.Run("op=add/"+mode, func(b *testing.B) {
			for b.Loop() {
				x.Add(1)
			}
		})
		b.Run("op=bit-lock-unlock/"+mode, func(b *testing.B) {
			for b.Loop() {
				bits.TestAndSet(fa)
				bits.TestAndClear(fa)
			}
		})
	}
}
