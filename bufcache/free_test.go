package bufcache

import (
	"testing"
	"unsafe"

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

// TestFolioSpareBufferHead: the head of a folio's ring is the folio's own
// buffer head (its frame's spare), the other buffers come from the CPU's
// cache; freeing a ring returns the spare to its folio only, so that a
// ring of 512-byte buffers built after it never takes another folio's
// spare, and the folio's next ring has its spare again.
func TestFolioSpareBufferHead(t *testing.T) {
	require.Equal(t, uintptr(128), unsafe.Sizeof(Folio{}), "a folio and its spare fill one aligned pair of cache lines")
	require.Equal(t, uintptr(64), unsafe.Sizeof(BufferHead{}))
	m, d, _ := newDev(t, Config{Check: true, InitBlocksize: 0}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	ring := func(block uint64, size uint32) []*BufferHead {
		bh, err := d.Getblk(cpu, block, size)
		require.NoError(t, err)
		Brelse(cpu, bh)
		m.InvalidateBhLRUs(cpu)
		var out []*BufferHead
		for b := range bh.Folio().Buffers().ring(nil) {
			out = append(out, b)
		}
		return out
	}
	free := func(page uint64) { require.NoError(t, d.TryToFreeBuffers(cpu, page)) }

	require.NoError(t, d.SetBlocksize(cpu, 4096))
	zero := ring(0, 4096)
	f0 := zero[0].Folio()
	require.Len(t, zero, 1)
	assert.Same(t, &f0.spare, zero[0], "a ring of one buffer is the folio's spare")
	free(0)
	assert.Nil(t, f0.spare.folio, "a freed spare is free")

	require.NoError(t, d.SetBlocksize(cpu, 512))
	one := ring(8, 512) // page 1: eight buffers, seven from the CPU's cache
	require.Len(t, one, 8)
	f1 := one[0].Folio()
	assert.Same(t, &f1.spare, one[0], "the head is the folio's own")
	for i, b := range one[1:] {
		assert.NotSame(t, &f0.spare, b, "buffer %d of page 1 is page 0's spare", i+1)
		assert.NotSame(t, &f1.spare, b, "buffer %d of page 1 is its head", i+1)
	}
	free(1)
	again := ring(8, 512)
	assert.Same(t, &f1.spare, again[0], "the next ring of page 1 has its spare again")
	require.NoError(t, d.Check())

	// A spare in use outside its folio's ring head is what Check reports.
	free(1)
	f1.spare.folio = f1 // marked in use on a folio without buffers
	assert.ErrorContains(t, d.Check(), "the folio's own buffer head is in use, but not as its ring's head")
	f1.spare.folio = nil
	require.NoError(t, d.Check())
}
