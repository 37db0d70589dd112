package lru

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckCatchesCorruption builds caches whose internal state breaks one
// invariant each and checks that Check names the CPU, the slot and the problem.
func TestCheckCatchesCorruption(t *testing.T) {
	type cache = Cache[bhKey, *testBH]
	tests := []struct {
		name     string
		corrupt  func(c *cache, p *pool)
		wantSlot int
		wantText string
	}{
		{
			name:     "count above size",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].n = c.size + 1 },
			wantSlot: -1, wantText: "occupied count 17 outside [0, 16]",
		},
		{
			name:     "negative count",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].n = -1 },
			wantSlot: -1, wantText: "occupied count -1 outside",
		},
		{
			name:     "duplicate entry",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].slots[2] = c.cpus[1].slots[0] },
			wantSlot: 2, wantText: "also in slot 0",
		},
		{
			name:     "entry past the prefix",
			corrupt:  func(c *cache, p *pool) { c.cpus[1].slots[7].e = p.bhs[9] },
			wantSlot: 7, wantText: "not empty past the 4 occupied slots",
		},
		{
			name:     "key past the prefix",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].slots[15].key = keyOf(3) },
			wantSlot: 15, wantText: "not empty past the 4 occupied slots",
		},
		{
			name:     "hole in the prefix",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].n = 2 },
			wantSlot: 2, wantText: "not empty past the 2 occupied slots",
		},
		{
			name:     "isolated cpu holding entries",
			corrupt:  func(c *cache, _ *pool) { c.cpus[1].isolated = true },
			wantSlot: -1, wantText: "isolated but holds 4 entries",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newTestCache(t, 3, DefaultSize, 10)
			fill(t, c, p, 0, 0, 1)
			fill(t, c, p, 1, 0, 1, 2, 3)
			require.NoError(t, c.Check())

			tt.corrupt(c, p)
			err := c.Check()

			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvariant)
			var ie *InvariantError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, 1, ie.CPU)
			assert.Equal(t, tt.wantSlot, ie.Slot)
			assert.Contains(t, ie.Error(), tt.wantText)
		})
	}
}

// TestCheckReportsEveryViolation corrupts two CPUs and expects both reported.
func TestCheckReportsEveryViolation(t *testing.T) {
	c, p := newTestCache(t, 2, OldSize, 4)
	fill(t, c, p, 0, 0, 1)
	fill(t, c, p, 1, 2)
	c.cpus[0].slots[1] = c.cpus[0].slots[0]
	c.cpus[1].isolated = true

	err := c.Check()

	require.Error(t, err)
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	var cpus []int
	for _, e := range joined.Unwrap() {
		var ie *InvariantError
		require.ErrorAs(t, e, &ie)
		cpus = append(cpus, ie.CPU)
	}
	// A copied slot repeats its entry on CPU 0; CPU 1 is isolated yet holds one.
	assert.Equal(t, []int{0, 1}, cpus)
}
