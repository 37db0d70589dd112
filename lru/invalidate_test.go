package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvalidateAll(t *testing.T) {
	tests := []struct {
		name            string
		cpus            int
		fills           map[int][]int // cpu → entries
		wantInterrupted int
		wantReleased    int
	}{
		{name: "all empty", cpus: 4, wantInterrupted: 0, wantReleased: 0},
		{name: "one cpu", cpus: 4, fills: map[int][]int{2: {1, 2, 3}}, wantInterrupted: 1, wantReleased: 3},
		{name: "two cpus sharing", cpus: 4, fills: map[int][]int{0: {1}, 3: {1, 2}}, wantInterrupted: 2, wantReleased: 3},
		{name: "every cpu full", cpus: 3, fills: map[int][]int{0: seq(0, 16), 1: seq(4, 20), 2: seq(8, 24)}, wantInterrupted: 3, wantReleased: 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newTestCache(t, tt.cpus, DefaultSize, 24)
			for cpu, idx := range tt.fills {
				fill(t, c, p, cpu, idx...)
			}
			interrupted, released := c.InvalidateAll()
			assert.Equal(t, tt.wantInterrupted, interrupted)
			assert.Equal(t, tt.wantReleased, released)
			for cpu := range c.CPUs() {
				assert.Zero(t, c.Len(cpu))
			}
			for i, b := range p.bhs {
				assert.Zero(t, b.refs.Load(), "entry %d", i)
			}
			assert.Zero(t, p.underflow.Load())
			assert.NoError(t, c.Check())

			interrupted, released = c.InvalidateAll()
			assert.Zero(t, interrupted, "a second invalidation finds nothing to do")
			assert.Zero(t, released)
		})
	}
}

func TestInvalidateCPU(t *testing.T) {
	tests := []struct {
		name         string
		fill         []int
		wantReleased int
	}{
		{name: "empty", fill: nil, wantReleased: 0},
		{name: "partial", fill: []int{3, 4}, wantReleased: 2},
		{name: "full", fill: seq(0, 16), wantReleased: 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newTestCache(t, 2, DefaultSize, 16)
			fill(t, c, p, 0, tt.fill...)
			fill(t, c, p, 1, 3)
			assert.Equal(t, tt.wantReleased, c.InvalidateCPU(0))
			assert.Zero(t, c.Len(0))
			assert.Equal(t, []int{3}, entriesIdx(c, 1), "the other CPU keeps its entries")
			assert.Equal(t, int64(1), p.bhs[3].refs.Load())
			assert.Equal(t, int64(0), p.bhs[4].refs.Load())
			assert.NoError(t, c.Check())
		})
	}
}

func TestDisableEnable(t *testing.T) {
	c, p := newTestCache(t, 2, DefaultSize, 8)
	fill(t, c, p, 0, 1, 2)
	fill(t, c, p, 1, 2)

	c.Disable()
	assert.True(t, c.Disabled())
	assert.Zero(t, c.Len(0), "Disable drains every CPU")
	assert.Zero(t, c.Len(1))
	assert.Zero(t, p.bhs[2].refs.Load())

	c.Disable() // nests
	steps := []struct {
		name         string
		wantErr      error
		wantDisabled bool
		wantInstall  InstallResult
	}{
		{name: "first enable", wantDisabled: true, wantInstall: InstallSkippedDisabled},
		{name: "second enable", wantDisabled: false, wantInstall: InstallInserted},
		{name: "unmatched enable", wantErr: ErrNotDisabled, wantDisabled: false, wantInstall: InstallMoved},
	}
	b := p.bhs[5]
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := c.Enable()
			if st.wantErr != nil {
				assert.ErrorIs(t, err, st.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, st.wantDisabled, c.Disabled())
			r, _ := c.Install(0, b.key, b)
			assert.Equal(t, st.wantInstall, r)
		})
	}

	c.Disable()
	_, hit, scanned := c.Lookup(0, b.key)
	assert.False(t, hit, "lookups run while disabled but find nothing")
	assert.Equal(t, c.Size(), scanned, "lookup_bh_lru does not test lru_cache_disabled")
	require.NoError(t, c.Enable())
	assert.NoError(t, c.Check())
}

func TestIsolated(t *testing.T) {
	c, p := newTestCache(t, 2, DefaultSize, 8)
	fill(t, c, p, 0, 1, 2, 3)
	fill(t, c, p, 1, 1)

	c.SetIsolated(0, true)
	assert.True(t, c.Isolated(0))
	assert.False(t, c.Isolated(1))
	assert.Zero(t, c.Len(0), "isolating empties the LRU")
	assert.Equal(t, int64(1), p.bhs[1].refs.Load(), "only CPU 1's reference is left")
	assert.Zero(t, p.bhs[2].refs.Load())

	steps := []struct {
		name        string
		cpu         int
		wantHit     bool
		wantScanned int
	}{
		{name: "isolated cpu misses without looking", cpu: 0, wantHit: false, wantScanned: 0},
		{name: "other cpu still hits", cpu: 1, wantHit: true, wantScanned: 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			e, hit, scanned := c.Lookup(st.cpu, p.bhs[1].key)
			assert.Equal(t, st.wantHit, hit)
			assert.Equal(t, st.wantScanned, scanned)
			if hit {
				c.hooks.Release(e)
			}
		})
	}
	r, steps0 := c.Install(0, p.bhs[4].key, p.bhs[4])
	assert.Equal(t, InstallSkippedIsolated, r)
	assert.Zero(t, steps0)
	interrupted, _ := c.InvalidateAll()
	assert.Equal(t, 1, interrupted, "an isolated CPU is never interrupted")

	c.SetIsolated(0, false)
	r, _ = c.Install(0, p.bhs[4].key, p.bhs[4])
	assert.Equal(t, InstallInserted, r, "back to normal once no longer isolated")
	assert.NoError(t, c.Check())
}
