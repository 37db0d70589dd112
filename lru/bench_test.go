package lru

import (
	"fmt"
	"sync"
	"testing"
)

// benchLookup is Tosatti's loop body on one CPU whose LRU is full: look up the
// entry at slot `slot` (or an absent key when slot < 0) and brelse the caller's
// reference on a hit. A hit at slot i moves the entry to the front, so the key
// to ask for next is the one now at slot i; the keys at slots 0..i rotate.
func benchLookup(b *testing.B, size, slot int) {
	c, p := newTestCache(b, 1, size, size)
	fill(b, c, p, 0, seq(0, size)...)
	absent := keyOf(size)
	scanned, next := 0, slot
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		key := absent
		if next >= 0 {
			key = p.bhs[next].key
			if next--; next < 0 {
				next = slot
			}
		}
		e, hit, n := c.Lookup(0, key)
		if hit {
			c.hooks.Release(e)
		}
		scanned += n
	}
	b.ReportMetric(float64(scanned)/float64(b.N), "slots/op")
}

func BenchmarkLookup(b *testing.B) {
	for _, size := range []int{OldSize, DefaultSize} {
		for _, slot := range []int{0, 7, 15, -1} {
			if slot >= size {
				continue
			}
			hit := fmt.Sprint(slot)
			if slot < 0 {
				hit = "miss"
			}
			b.Run(fmt.Sprintf("size=%d/hit=%s", size, hit), func(b *testing.B) { benchLookup(b, size, slot) })
		}
	}
}

func BenchmarkInstall(b *testing.B) {
	b.Run("case=moved", func(b *testing.B) {
		// Install the entry in the last slot: the cascade runs the whole LRU
		// and the LRU rotates, so the next call finds the same situation.
		c, p := newTestCache(b, 1, DefaultSize, DefaultSize)
		fill(b, c, p, 0, seq(0, DefaultSize)...)
		steps := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			e := p.bhs[DefaultSize-1-i%DefaultSize]
			_, n := c.Install(0, e.key, e)
			steps += n
		}
		b.ReportMetric(float64(steps)/float64(b.N), "slots/op")
	})
	b.Run("case=evict", func(b *testing.B) {
		// DefaultSize+1 entries: the one to install next is always the one
		// evicted last, so every call inserts and evicts.
		c, p := newTestCache(b, 1, DefaultSize, DefaultSize+1)
		fill(b, c, p, 0, seq(0, DefaultSize)...)
		steps := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			e := p.bhs[DefaultSize-i%(DefaultSize+1)]
			_, n := c.Install(0, e.key, e)
			steps += n
		}
		b.ReportMetric(float64(steps)/float64(b.N), "slots/op")
	})
}

func BenchmarkInvalidateAll(b *testing.B) {
	for _, cpus := range []int{2, 8, 64, 256} {
		for _, full := range []bool{false, true} {
			b.Run(fmt.Sprintf("cpus=%d/full=%d", cpus, b2i(full)), func(b *testing.B) {
				c, p := newTestCache(b, cpus, DefaultSize, DefaultSize)
				released := 0
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if full {
						b.StopTimer()
						for cpu := range cpus {
							for _, e := range p.bhs {
								c.Install(cpu, e.key, e)
							}
						}
						b.StartTimer()
					}
					_, n := c.InvalidateAll()
					released += n
				}
				b.ReportMetric(float64(released)/float64(b.N), "slots/op")
			})
		}
	}
}

// BenchmarkMutexPair is the yardstick: an uncontended sync.Mutex Lock/Unlock.
func BenchmarkMutexPair(b *testing.B) {
	b.ReportAllocs()
	benchMutexPair(b)
}

func benchMutexPair(b *testing.B) {
	var mu sync.Mutex
	for range b.N {
		mu.Lock()
		//lint:ignore SA2001 the empty critical section is the point: this times the lock itself
		mu.Unlock()
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
