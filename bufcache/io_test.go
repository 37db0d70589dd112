package bufcache

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestBreadModifySyncRoundTrip: what a buffer holds after bread is what the disk
// holds; what is written through a buffer and synced is on the disk.
func TestBreadModifySyncRoundTrip(t *testing.T) {
	for _, size := range []uint32{512, 1024, 2048, 4096} {
		t.Run("bsize="+itoa(size), func(t *testing.T) {
			m, d, disk := newDev(t, Config{InitBlocksize: blocksize.PolicyLogical, Check: true}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			require.NoError(t, d.SetBlocksize(cpu, size))
			const block = 13
			pattern := bytes.Repeat([]byte{0xa5, 0x5a, byte(size >> 8)}, int(size))[:size]
			// Put the pattern on disk behind the cache's back, then read it.
			w := new(blk.Bio)
			w.Reset(blk.OpWrite, block*uint64(size)/512)
			w.AddVec(append([]byte(nil), pattern...), size)
			w.EndIO = func(*blk.Bio) {}
			disk.Submit(w)
			require.NoError(t, w.Err)

			bh, err := d.Bread(cpu, block, size)
			require.NoError(t, err)
			assert.True(t, bh.Has(BHUptodate))
			assert.Equal(t, pattern, bh.Data())

			LockBuffer(cpu, bh)
			copy(bh.Data()[10:], "written through the buffer cache")
			MarkBufferDirty(cpu, bh)
			UnlockBuffer(cpu, bh)
			assert.True(t, bh.Folio().Has(FolioDirty))
			require.NoError(t, SyncDirtyBuffer(cpu, bh))
			assert.False(t, bh.Has(BHDirty))

			got := make([]byte, size)
			_, err = disk.ReadAt(got, int64(block)*int64(size))
			require.NoError(t, err)
			assert.Equal(t, bh.Data(), got)
			assert.Equal(t, "written through the buffer cache", string(got[10:42]))
			Brelse(cpu, bh)

			require.NoError(t, d.SyncBlockdev(cpu))
			assert.False(t, bh.Folio().Has(FolioDirty), "sync cleans the folio")
		})
	}
}

func TestBreadFailure(t *testing.T) {
	m, d, disk := newFaultyDev(t, Config{Check: true})
	disk.failRead = true
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 2, 4096)
	assert.Nil(t, bh)
	assert.ErrorIs(t, err, ErrIO)
	// The buffer is cached, not uptodate, and only the LRU still holds it.
	got := d.FindGetBlock(cpu, 2, 4096)
	require.NotNil(t, got)
	assert.False(t, got.Has(BHUptodate))
	assert.False(t, got.Has(BHLock))
	assert.Equal(t, 2, got.Count(), "LRU + this lookup")
	Brelse(cpu, got)
	disk.failRead = false
	got, err = d.Bread(cpu, 2, 4096)
	require.NoError(t, err, "a later read retries")
	Brelse(cpu, got)
}

func TestSyncDirtyBufferErrors(t *testing.T) {
	m, d, disk := newFaultyDev(t, Config{})
	disk.failWrite = true
	mem := disk.MemDisk
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 1, 4096)
	require.NoError(t, err)

	assert.NoError(t, SyncDirtyBuffer(cpu, bh), "a clean buffer is not written")
	assert.Zero(t, mem.Stats().Writes+mem.Stats().Errors)

	MarkBufferDirty(cpu, bh)
	err = SyncDirtyBuffer(cpu, bh)
	assert.ErrorIs(t, err, ErrIO)
	assert.True(t, bh.Has(BHWriteEIO))
	assert.False(t, bh.Has(BHUptodate))
	assert.Equal(t, uint64(1), cpu.Events()[EvWarning], "lost sync page write")

	// A rewrite clears Write_EIO.
	disk.failWrite = false
	bh.SetUptodate(cpu)
	MarkBufferDirty(cpu, bh)
	require.NoError(t, SyncDirtyBuffer(cpu, bh))
	assert.False(t, bh.Has(BHWriteEIO))

	// Marking a buffer that is not uptodate dirty warns (and still dirties it).
	fresh, err := d.Getblk(cpu, 9, 4096)
	require.NoError(t, err)
	warnings := cpu.Events()[EvWarning]
	MarkBufferDirty(cpu, fresh)
	assert.Equal(t, warnings+1, cpu.Events()[EvWarning])
	assert.True(t, fresh.Has(BHDirty))
	Brelse(cpu, fresh)

	// A buffer held across a block size change is discarded: unmapped. Writing
	// it fails with ErrUnmapped and clears its dirty bit.
	require.NoError(t, d.SetBlocksize(cpu, 1024))
	assert.False(t, bh.Has(BHMapped))
	MarkBufferDirty(cpu, bh)
	assert.ErrorIs(t, SyncDirtyBuffer(cpu, bh), ErrUnmapped)
	assert.False(t, bh.Has(BHDirty))
	Brelse(cpu, bh)
}

func TestSetBlocksize(t *testing.T) {
	m, d, disk := newDev(t, Config{CPUs: 2, Check: true}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	for _, tc := range []struct {
		size uint32
		want error
	}{
		{1000, blocksize.ErrNotPowerOfTwo},
		{256, blocksize.ErrBelowMinimum},
		{8192, blocksize.ErrAbovePageSize},
	} {
		assert.ErrorIs(t, d.SetBlocksize(cpu, tc.size), tc.want)
		assert.Equal(t, uint32(4096), d.BlockSize(), "nothing changed")
	}

	bh, err := d.Bread(cpu, 5, 4096)
	require.NoError(t, err)
	copy(bh.Data(), "dirty data must survive a block size change")
	MarkBufferDirty(cpu, bh)
	Brelse(cpu, bh)
	other, err := d.Getblk(m.CPU(1), 6, 4096) // another CPU's LRU holds block 6
	require.NoError(t, err)
	Brelse(m.CPU(1), other)

	before := cpu.Events()
	require.NoError(t, d.SetBlocksize(cpu, 4096), "same size")
	assert.Equal(t, before, cpu.Events(), "same size is a no-op")
	assert.Equal(t, 2, d.NrPages())

	require.NoError(t, d.SetBlocksize(cpu, 1024))
	ev := cpu.Events().Sub(before)
	assert.Equal(t, uint32(1024), d.BlockSize())
	assert.Equal(t, 0, d.NrPages(), "kill_bdev drops the page cache")
	assert.Equal(t, uint64(1), ev[EvLRUIPI], "both CPUs' LRUs held buffers: CPU 0 flushes its own, CPU 1 is interrupted")
	assert.Equal(t, uint64(1), ev[EvBioSubmit], "sync_blockdev wrote the dirty block")
	got := make([]byte, 43)
	_, err = disk.ReadAt(got, 5*4096)
	require.NoError(t, err)
	assert.Equal(t, "dirty data must survive a block size change", string(got))

	bh, err = d.Bread(cpu, 20, 1024) // same bytes, 1 KiB block 20
	require.NoError(t, err)
	assert.Equal(t, "dirty data must", string(bh.Data()[:15]))
	Brelse(cpu, bh)
}

func TestSetBlocksizeBelowLogical(t *testing.T) {
	m, d, _ := newDev(t, Config{}, 1<<20, 4096, DeviceOptions{})
	assert.ErrorIs(t, d.SetBlocksize(m.CPU(0), 512), blocksize.ErrBelowLogical)
}

func TestMetadataOnlyDevice(t *testing.T) {
	// 16 TiB: Willy's block 4G with 512-byte blocks is page 2^29, height 5.
	m, d, disk := newDev(t, Config{InitBlocksize: blocksize.PolicyLogical}, 16<<40, 512, DeviceOptions{MetadataOnly: true})
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 4<<30, 512)
	require.NoError(t, err)
	assert.Nil(t, bh.Data())
	assert.Equal(t, uint64(1)<<29, bh.Folio().Index())
	assert.Equal(t, 5, d.IndexHeight())
	MarkBufferDirty(cpu, bh)
	require.NoError(t, SyncDirtyBuffer(cpu, bh))
	assert.Zero(t, disk.StoredBytes(), "metadata-only I/O stores nothing")
	assert.Equal(t, uint64(1), disk.Stats().Writes)
	Brelse(cpu, bh)
}

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		if v /= 10; v == 0 {
			return string(b[i:])
		}
	}
}
