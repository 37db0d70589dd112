package bufcache

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// fillDisk writes a position-dependent pattern to the whole disk, behind the
// cache's back, and returns it.
func fillDisk(t testing.TB, disk *blk.MemDisk) []byte {
	data := make([]byte, disk.Sectors()<<blk.SectorShift)
	for i := range data {
		data[i] = byte(i*131/512 + i)
	}
	b := new(blk.Bio)
	b.Reset(blk.OpWrite, 0)
	b.AddVec(data, uint32(len(data)))
	b.EndIO = func(*blk.Bio) {}
	disk.Submit(b)
	require.NoError(t, b.Err)
	return data
}

// TestReadReadahead: reads return the disk's bytes; uncached pages come in by
// readahead windows of multi-page bios without buffer heads, so the block size
// changes nothing about a read (the set_init_blocksize thread's unchanged read
// column). A 1 MiB read from the start of a disk with the default 128 KiB
// read_ahead_kb opens a window as large as the read (a read larger than
// read_ahead_kb may have up to max_sectors), marked half way; reaching the mark
// starts the next 1 MiB: two bios of 256 pages.
func TestReadReadahead(t *testing.T) {
	var perSize []Counters
	for _, bsize := range []uint32{512, 4096} {
		t.Run(fmt.Sprintf("bsize=%d", bsize), func(t *testing.T) {
			m, d, disk := newDev(t, Config{Blocksize: blocksize.PolicyLogical, Check: true}, 4<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			require.NoError(t, d.SetBlocksize(cpu, bsize))
			want := fillDisk(t, disk)
			before := cpu.Events()
			got := make([]byte, 1<<20)
			n, err := d.Read(cpu, 0, got)
			require.NoError(t, err)
			require.Equal(t, uint64(len(got)), n)
			assert.True(t, bytes.Equal(want[:len(got)], got))
			ev := cpu.Events().Sub(before)
			assert.Zero(t, ev[EvBHAlloc], "readahead builds no buffer heads")
			assert.Equal(t, uint64(512), ev[EvReadaheadPage], "the read's window and the next")
			assert.Equal(t, uint64(2), ev[EvBioSubmit], "a 1 MiB bio each")
			perSize = append(perSize, ev)

			n, err = d.Read(cpu, 4<<20-100, got) // crosses the end
			require.NoError(t, err)
			assert.Equal(t, uint64(100), n)
			assert.Equal(t, want[4<<20-100:], got[:100])
			n, err = d.Read(cpu, 4<<20, got)
			assert.NoError(t, err)
			assert.Zero(t, n, "at the end: EOF")
		})
	}
	require.Len(t, perSize, 2)
	assert.Equal(t, perSize[0], perSize[1], "the same work whatever the block size")
}

// TestReadPageCacheSmallerThanWindow: with a page cache smaller than the
// readahead window, the window's first folios are reclaimed before the read
// copies them; the read then brings each in on its own and still returns the
// disk's bytes (it used to retry the window forever).
func TestReadPageCacheSmallerThanWindow(t *testing.T) {
	for _, limit := range []int{1, 8, defaultReadAheadKB>>2 - 1} { // up to one page less than the 128 KiB window
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			m, d, disk := newDev(t, Config{PageCacheLimit: limit}, 1<<20, 512, DeviceOptions{})
			want := fillDisk(t, disk)
			got := make([]byte, 256<<10)
			n, err := d.Read(m.CPU(0), 4096, got)
			require.NoError(t, err)
			require.Equal(t, uint64(len(got)), n)
			assert.True(t, bytes.Equal(want[4096:4096+len(got)], got))
			assert.LessOrEqual(t, d.NrPages(), len(got)/4096+reclaimBatch, "bounded by one window")
		})
	}
}

// TestReadSmallReadsRampUp: sequential 4 KiB reads of an uncached device
// open a window of 4 pages (get_init_ra_size of one page, marked at its
// second), and each mark reached starts the next, twice as large up to
// read_ahead_kb's 128 KiB (get_next_ra_size) and marked at its first page:
// after 64 reads, windows 0–3, 4–11, 12–27, 28–59, 60–91 and 92–123 — six
// bios, 124 pages cached.
func TestReadSmallReadsRampUp(t *testing.T) {
	m, d, disk := newDev(t, Config{}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	want := fillDisk(t, disk)
	buf := make([]byte, 4096)
	for i := uint64(0); i < 64; i++ {
		_, err := d.Read(cpu, i*4096, buf)
		require.NoError(t, err)
		require.Equal(t, want[i*4096:(i+1)*4096], buf)
	}
	assert.Equal(t, uint64(6), cpu.Events()[EvBioSubmit])
	assert.Equal(t, 124, d.NrPages())
}

// TestReadAfterPartialWrite: a folio that has buffers from a partial write but
// is not uptodate is read buffer by buffer, keeping the written bytes.
func TestReadAfterPartialWrite(t *testing.T) {
	m, d, disk := newDev(t, Config{Blocksize: blocksize.PolicyLogical, Check: true}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, 512))
	want := fillDisk(t, disk)
	_, err := d.Write(cpu, 5*4096+512, userIter(t, []byte("written, not yet synced")))
	require.NoError(t, err)
	copy(want[5*4096+512:], "written, not yet synced")
	got := make([]byte, 4096)
	_, err = d.Read(cpu, 5*4096, got)
	require.NoError(t, err)
	assert.Equal(t, want[5*4096:6*4096], got)
	// One read by write_begin (the partly written block), then the seven other
	// 512-byte buffers of the page; the written one is kept.
	assert.Equal(t, uint64(1+7), disk.Stats().Reads)
}

func TestReadFailure(t *testing.T) {
	m, d, disk := newFaultyDev(t, Config{})
	disk.failRead = true
	n, err := d.Read(m.CPU(0), 0, make([]byte, 8192))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ErrIO)
}
