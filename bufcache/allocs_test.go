package bufcache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

// queuedWrite is a machine writing through a request queue (plug, merges,
// requests, split at the loop device's limits) to a 64 MiB memory disk that
// stores the data: the whole path a page takes from write(2) to the disk.
type queuedWrite struct {
	cpu  *CPU
	d    *BlockDevice
	u    *UserBuf
	it   IovIter
	pos  uint64 // the next write's position
	last uint64 // the last write's
}

func newQueuedWrite(t *testing.T, bsize uint32, data, oneGoroutine bool) *queuedWrite {
	t.Helper()
	q, _ := newLoopQueue(t, 64<<20)
	m, err := NewMachine(Config{InitBlocksize: blocksize.PolicyLogical, DirtyLimit: 256, PageCacheLimit: 1024, OneGoroutine: oneGoroutine})
	require.NoError(t, err)
	d, err := m.AddDisk(q, DeviceOptions{MetadataOnly: !data})
	require.NoError(t, err)
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, bsize))
	u := NewUserBufSize(1<<20, 0, 4096)
	if data {
		u = NewUserBuf(make([]byte, 1<<20), 0, 4096)
	}
	return &queuedWrite{cpu: cpu, d: d, u: u}
}

// writeSync writes 1 MiB at pos and syncs the device; advance moves pos to
// the next MiB of the disk, wrapping, so that every write meets new pages.
func (w *queuedWrite) writeSync(t *testing.T, advance bool) {
	require.NoError(t, w.it.Reset(w.u, 0, 1<<20))
	_, err := w.d.Write(w.cpu, w.pos, &w.it)
	require.NoError(t, err)
	require.NoError(t, w.d.SyncBlockdev(w.cpu))
	w.last = w.pos
	if advance {
		w.pos = (w.pos + 1<<20) % (64 << 20)
	}
}

// TestSteadyStateAllocations: once warm, a page costs no allocation on the
// write path, in writeback, in the bios and requests that carry it, in
// reclaim and in lookups. The one allocation left is the page-cache index's:
// a leaf node of 64 slots when pages enter a range no cached page holds (the
// kernel's xa_node, freed after an RCU grace period; the model leaves freed
// nodes to the collector, which gives lock-free readers that grace period),
// at most one per 64 pages. The same holds on a confined machine
// (Config.OneGoroutine).
func TestSteadyStateAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("warms a page cache of 1024 folios")
	}
	tests := []struct {
		name    string
		bsize   uint32
		data    bool
		advance bool // new pages each write (reclaim frees old ones), else rewrites
		max     float64
	}{
		{"rewrite cached pages, 4096-byte blocks, data", 4096, true, false, 0},
		{"rewrite cached pages, 512-byte blocks, data", 512, true, false, 0},
		{"rewrite cached pages, 512-byte blocks, metadata", 512, false, false, 0},
		{"new pages and reclaim, 4096-byte blocks, data", 4096, true, true, 256 / 64},
		{"new pages and reclaim, 512-byte blocks, data", 512, true, true, 256 / 64},
		{"new pages and reclaim, 1024-byte blocks, metadata", 1024, false, true, 256 / 64},
	}
	for _, tt := range tests {
		for _, one := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/one-goroutine=%v", tt.name, one), func(t *testing.T) {
				w := newQueuedWrite(t, tt.bsize, tt.data, one)
				for range 80 { // past the page cache's size, and once around the disk
					w.writeSync(t, tt.advance)
				}
				allocs := testing.AllocsPerRun(20, func() { w.writeSync(t, tt.advance) })
				assert.LessOrEqual(t, allocs, tt.max, "allocations per 1 MiB written and synced (256 pages)")
				block := w.last / uint64(tt.bsize) // cached: the last write's first block
				bh := w.d.FindGetBlock(w.cpu, block, tt.bsize)
				require.NotNil(t, bh)
				Brelse(w.cpu, bh)
				assert.Zero(t, testing.AllocsPerRun(100, func() {
					Brelse(w.cpu, w.d.FindGetBlock(w.cpu, block, tt.bsize)) // an LRU hit
					Brelse(w.cpu, w.d.FindGetBlockSlow(w.cpu, block+1))     // the page cache
				}), "lookups")
			})
		}
	}
}
