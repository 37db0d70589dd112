package lru

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstall(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		fill      int  // entries 0..fill-1 installed first, entry 0 in slot 0
		install   int  // pool index to install
		disable   bool // Disable before installing
		isolate   bool // SetIsolated before installing
		want      InstallResult
		wantSteps int
		wantOrder []int
	}{
		{name: "new into empty", size: 16, fill: 0, install: 20, want: InstallInserted, wantSteps: 16, wantOrder: []int{20}},
		{name: "new into partial", size: 16, fill: 3, install: 20, want: InstallInserted, wantSteps: 16, wantOrder: []int{20, 0, 1, 2}},
		{name: "present at 0", size: 16, fill: 16, install: 0, want: InstallMoved, wantSteps: 1, wantOrder: seq(0, 16)},
		{name: "present at 5", size: 16, fill: 16, install: 5, want: InstallMoved, wantSteps: 6, wantOrder: moveToFront(seq(0, 16), 5)},
		{name: "present at 15", size: 16, fill: 16, install: 15, want: InstallMoved, wantSteps: 16, wantOrder: moveToFront(seq(0, 16), 15)},
		{name: "present in partial", size: 16, fill: 4, install: 3, want: InstallMoved, wantSteps: 4, wantOrder: []int{3, 0, 1, 2}},
		{name: "evict slot 15", size: 16, fill: 16, install: 20, want: InstallInsertedEvicted, wantSteps: 16, wantOrder: append([]int{20}, seq(0, 15)...)},
		{name: "size=1 evict", size: 1, fill: 1, install: 20, want: InstallInsertedEvicted, wantSteps: 1, wantOrder: []int{20}},
		{name: "size=1 present", size: 1, fill: 1, install: 0, want: InstallMoved, wantSteps: 1, wantOrder: []int{0}},
		{name: "size=8 evict", size: 8, fill: 8, install: 20, want: InstallInsertedEvicted, wantSteps: 8, wantOrder: append([]int{20}, seq(0, 7)...)},
		{name: "size=64 evict", size: 64, fill: 64, install: 70, want: InstallInsertedEvicted, wantSteps: 64, wantOrder: append([]int{70}, seq(0, 63)...)},
		{name: "disabled", size: 16, fill: 0, install: 20, disable: true, want: InstallSkippedDisabled, wantOrder: []int{}},
		{name: "isolated", size: 16, fill: 0, install: 20, isolate: true, want: InstallSkippedIsolated, wantOrder: []int{}},
		{name: "disabled and isolated", size: 16, fill: 0, install: 20, disable: true, isolate: true, want: InstallSkippedDisabled, wantOrder: []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const cpu = 0
			c, p := newTestCache(t, 2, tt.size, 80)
			fill(t, c, p, cpu, seq(0, tt.fill)...)
			fill(t, c, p, 1, 0) // another CPU holds entry 0 too
			if tt.disable {
				c.Disable()
			}
			if tt.isolate {
				c.SetIsolated(cpu, true)
			}
			before := make([]int64, len(p.bhs))
			for i, b := range p.bhs {
				before[i] = b.refs.Load()
			}

			b := p.bhs[tt.install]
			r, steps := c.Install(cpu, b.key, b)

			assert.Equal(t, tt.want, r, r.String())
			assert.Equal(t, tt.wantSteps, steps)
			assert.Equal(t, tt.wantOrder, entriesIdx(c, cpu))
			for i, b := range p.bhs {
				assert.Equal(t, int64(c.Holds(b)), b.refs.Load(), "entry %d: refs == CPUs holding it", i)
				delta := b.refs.Load() - before[i]
				switch {
				case i == tt.install && (r == InstallInserted || r == InstallInsertedEvicted):
					assert.Equal(t, int64(1), delta, "the LRU's reference on the new entry")
				case r == InstallInsertedEvicted && i == tt.fill-1:
					assert.Equal(t, int64(-1), delta, "the evicted entry is released")
				default:
					assert.Zero(t, delta, "entry %d", i)
				}
			}
			assert.Zero(t, p.underflow.Load())
			assert.NoError(t, c.Check())
		})
	}
}

func TestInstallResultString(t *testing.T) {
	tests := []struct {
		r    InstallResult
		want string
	}{
		{InstallInserted, "inserted"},
		{InstallInsertedEvicted, "inserted+evicted"},
		{InstallMoved, "moved"},
		{InstallSkippedDisabled, "skipped-disabled"},
		{InstallSkippedIsolated, "skipped-isolated"},
		{InstallResult(200), "InstallResult(200)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.r.String())
		})
	}
}

// TestInstallThenLookup is __find_get_block's miss path followed by its hit
// path: the slow path's reference, the install, the caller's brelse, then a
// hit that takes and drops the caller's reference again.
func TestInstallThenLookup(t *testing.T) {
	for _, size := range []int{1, 8, 16, 64} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			c, p := newTestCache(t, 1, size, size+1)
			for i, b := range p.bhs {
				_, hit, _ := c.Lookup(0, b.key)
				require.False(t, hit)
				b.refs.Add(1) // __find_get_block_slow's get_bh
				r, _ := c.Install(0, b.key, b)
				c.hooks.Release(b) // the caller's brelse
				wantR := InstallInserted
				if i >= size {
					wantR = InstallInsertedEvicted
				}
				assert.Equal(t, wantR, r)
			}
			last := p.bhs[size]
			e, hit, scanned := c.Lookup(0, last.key)
			require.True(t, hit)
			assert.Equal(t, 1, scanned)
			c.hooks.Release(e)
			assert.Equal(t, int64(0), p.bhs[0].refs.Load(), "the first entry was evicted")
			assert.Equal(t, int64(1), last.refs.Load())
			assert.Equal(t, size, c.Len(0))
		})
	}
}
