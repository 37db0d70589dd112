package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHotPathsDoNotAllocate measures allocations of the operations
// __find_get_block and the invalidations perform.
func TestHotPathsDoNotAllocate(t *testing.T) {
	c, p := newTestCache(t, 2, DefaultSize, DefaultSize+1)
	fill(t, c, p, 0, seq(0, DefaultSize)...)
	next := DefaultSize // the pool entry that is not in CPU 0's LRU
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "lookup hit slot 0", run: func(t *testing.T) {
			e, hit, _ := c.Lookup(0, p.bhs[0].key)
			require.True(t, hit)
			c.hooks.Release(e)
		}},
		{name: "lookup miss", run: func(t *testing.T) {
			_, hit, _ := c.Lookup(0, keyOf(1000))
			require.False(t, hit)
		}},
		{name: "install moved", run: func(t *testing.T) {
			r, _ := c.Install(0, p.bhs[0].key, p.bhs[0])
			require.Equal(t, InstallMoved, r)
		}},
		{name: "install evict", run: func(t *testing.T) {
			b := p.bhs[next]
			r, _ := c.Install(0, b.key, b)
			require.Equal(t, InstallInsertedEvicted, r)
			next = (next + len(p.bhs) - 1) % len(p.bhs) // the entry just evicted
		}},
		{name: "refill and invalidate all", run: func(t *testing.T) {
			for _, b := range p.bhs[:DefaultSize] {
				c.Install(0, b.key, b)
			}
			interrupted, released := c.InvalidateAll()
			require.Equal(t, 1, interrupted)
			require.Equal(t, DefaultSize, released)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Zero(t, testing.AllocsPerRun(100, func() { tt.run(t) }))
		})
	}
}
