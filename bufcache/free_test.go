package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTryToFreeBuffers: the ring is freed only when no buffer
// is referenced, dirty or locked — and a CPU's LRU holding a buffer counts as a
// reference until invalidate_bh_lrus.
func TestTryToFreeBuffers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(cpu *CPU, bh *BufferHead) // leaves the buffer busy
		clear func(cpu *CPU, bh *BufferHead) // makes it free again
	}{
		{"held by a caller",
			func(cpu *CPU, bh *BufferHead) { bh.get(cpu) },
			func(cpu *CPU, bh *BufferHead) { Brelse(cpu, bh) }},
		{"held by the LRU",
			func(*CPU, *BufferHead) {},
			func(cpu *CPU, _ *BufferHead) { cpu.Machine().InvalidateBhLRUs(cpu) }},
		{"dirty",
			func(cpu *CPU, bh *BufferHead) { MarkBufferDirty(cpu, bh) },
			func(cpu *CPU, bh *BufferHead) { require.NoError(t, bh.Device().SyncBlockdev(cpu)) }},
		{"locked",
			func(cpu *CPU, bh *BufferHead) { LockBuffer(cpu, bh) },
			func(cpu *CPU, bh *BufferHead) { UnlockBuffer(cpu, bh) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, Config{InitBlocksize: 0}, 1<<20, 512, DeviceOptions{})
			require.NoError(t, d.SetBlocksize(m.CPU(0), 1024))
			cpu := m.CPU(0)
			bh, err := d.Bread(cpu, 6, 1024) // page 1, third buffer; now in the LRU
			require.NoError(t, err)
			Brelse(cpu, bh)
			if tc.name != "held by the LRU" {
				m.InvalidateBhLRUs(cpu)
			}
			tc.setup(cpu, bh)
			assert.ErrorIs(t, d.TryToFreeBuffers(cpu, 1), ErrBuffersBusy)
			assert.NotNil(t, bh.Folio().Buffers(), "nothing changed")
			require.NoError(t, d.Check())

			tc.clear(cpu, bh)
			f := bh.Folio()
			refs := f.RefCount()
			before := cpu.Events()
			require.NoError(t, d.TryToFreeBuffers(cpu, 1))
			assert.Equal(t, uint64(4), cpu.Events().Sub(before)[EvBHFree])
			assert.Nil(t, f.Buffers())
			assert.False(t, f.Has(FolioPrivate))
			assert.Equal(t, refs-1, f.RefCount(), "the ring's folio reference is dropped")
			assert.ErrorIs(t, d.TryToFreeBuffers(cpu, 1), ErrNoBuffers)
			require.NoError(t, d.Check())

			// The buffers come back on the next getblk, from this CPU's free cache.
			again, err := d.Getblk(cpu, 6, 1024)
			require.NoError(t, err)
			assert.False(t, again.Has(BHUptodate), "fresh buffers on a non-uptodate folio")
			Brelse(cpu, again)
		})
	}
}

func TestTryToFreeBuffersNotCached(t *testing.T) {
	m, d, _ := newDev(t, Config{}, 1<<20, 512, DeviceOptions{})
	assert.ErrorIs(t, d.TryToFreeBuffers(m.CPU(0), 3), ErrNotCached)
}

// TestTruncateWithHeldBuffer: kill_bdev removes a folio whose buffer a caller
// still holds; the buffer is discarded (unmapped, clean) and stays attached to
// the orphaned folio until released.
func TestTruncateWithHeldBuffer(t *testing.T) {
	m, d, _ := newDev(t, Config{Check: true}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 3, 4096)
	require.NoError(t, err)
	require.NoError(t, d.SetBlocksize(cpu, 512))
	assert.Equal(t, 0, d.NrPages())
	assert.False(t, bh.Has(BHMapped))
	assert.Same(t, bh, bh.Folio().Buffers(), "the orphaned folio keeps its ring")
	assert.Equal(t, 1, bh.Count(), "only the caller; the LRU was invalidated")
	Brelse(cpu, bh)
}
