package lru

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moveToFront returns order with the element at i moved to the front.
func moveToFront(order []int, i int) []int {
	out := append([]int{order[i]}, order[:i]...)
	return append(out, order[i+1:]...)
}

func TestLookupHitMovesToFront(t *testing.T) {
	tests := []struct {
		size int
		slot int // where the wanted entry sits; -1 for a key that is absent
		fill int // how many entries the LRU holds
	}{
		{size: 16, slot: 0, fill: 16},
		{size: 16, slot: 5, fill: 16},
		{size: 16, slot: 15, fill: 16},
		{size: 16, slot: -1, fill: 16},
		{size: 16, slot: 2, fill: 3},
		{size: 16, slot: -1, fill: 3},
		{size: 16, slot: -1, fill: 0},
		{size: 1, slot: 0, fill: 1},
		{size: 1, slot: -1, fill: 1},
		{size: 8, slot: 7, fill: 8},
		{size: 8, slot: -1, fill: 8},
		{size: 64, slot: 0, fill: 64},
		{size: 64, slot: 40, fill: 64},
		{size: 64, slot: 63, fill: 64},
		{size: 64, slot: -1, fill: 64},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("size=%d/slot=%d/fill=%d", tt.size, tt.slot, tt.fill), func(t *testing.T) {
			const cpu = 1
			absent := tt.size + 1
			c, p := newTestCache(t, 2, tt.size, absent+1)
			order := seq(0, tt.fill)
			fill(t, c, p, cpu, order...)
			require.Equal(t, order, entriesIdx(c, cpu))

			want := absent
			if tt.slot >= 0 {
				want = order[tt.slot]
			}
			e, hit, scanned := c.Lookup(cpu, keyOf(want))

			if tt.slot < 0 {
				assert.False(t, hit)
				assert.Nil(t, e)
				assert.Equal(t, tt.size, scanned, "a miss visits every slot")
				assert.Equal(t, order, entriesIdx(c, cpu), "a miss changes nothing")
			} else {
				assert.True(t, hit)
				assert.Same(t, p.bhs[want], e)
				assert.Equal(t, tt.slot+1, scanned)
				assert.Equal(t, moveToFront(order, tt.slot), entriesIdx(c, cpu))
				assert.Equal(t, int64(2), e.refs.Load(), "the LRU's reference and the caller's")
			}
			for i, b := range p.bhs {
				if i != want || tt.slot < 0 {
					assert.Equal(t, int64(c.Holds(b)), b.refs.Load(), "entry %d", i)
				}
			}
			assert.Empty(t, entriesIdx(c, 0), "the other CPU is untouched")
			assert.NoError(t, c.Check())
		})
	}
}

// TestLookupKeyFields checks that a slot matches only when every field of the
// key is equal: (bdev, blocknr, size) in the kernel.
func TestLookupKeyFields(t *testing.T) {
	base := keyOf(7)
	tests := []struct {
		name string
		key  bhKey
		hit  bool
	}{
		{name: "same", key: base, hit: true},
		{name: "other dev", key: bhKey{dev: 2, block: base.block, size: base.size}},
		{name: "other block", key: bhKey{dev: base.dev, block: 8, size: base.size}},
		{name: "other size", key: bhKey{dev: base.dev, block: base.block, size: 1024}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newTestCache(t, 1, DefaultSize, 8)
			fill(t, c, p, 0, 7)
			_, hit, _ := c.Lookup(0, tt.key)
			assert.Equal(t, tt.hit, hit)
		})
	}
}

// TestLookupRepeated follows Tosatti's loop: the same block, looked up and
// released over and over, hits slot 0 every time and leaves the count alone.
func TestLookupRepeated(t *testing.T) {
	c, p := newTestCache(t, 1, DefaultSize, 4)
	fill(t, c, p, 0, 1, 2, 3)
	for range 100 {
		e, hit, scanned := c.Lookup(0, keyOf(1))
		require.True(t, hit)
		assert.Equal(t, 1, scanned)
		c.hooks.Release(e)
	}
	assert.Equal(t, int64(1), p.bhs[1].refs.Load())
	assert.Equal(t, []int{1, 2, 3}, entriesIdx(c, 0))
}
