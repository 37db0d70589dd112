package bufcache

import (
	"bytes"
	"fmt"
	"testing"
	"time"

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
			m, d, disk := newDev(t, Config{InitBlocksize: blocksize.PolicyLogical, Check: true}, 4<<20, 512, DeviceOptions{})
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
	m, d, disk := newDev(t, Config{InitBlocksize: blocksize.PolicyLogical, Check: true}, 1<<20, 512, DeviceOptions{})
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

// TestReadFullFolio checks block_read_full_folio on a folio whose buffers
// exist (512-byte blocks, page 5 of the disk): read(2) reads exactly the
// buffers that are not uptodate, one bio each; every buffer ends unlocked and
// out of its async read; the folio is uptodate only if every buffer is, and
// the bytes are the disk's, or ErrIO. The async-read bits are counted.
func TestReadFullFolio(t *testing.T) {
	const page, bs = 5, 512
	tests := []struct {
		name      string
		bread     []uint64 // blocks of the page read by Bread first
		partial   int      // a block of the page written in part first (write_begin reads it), or -1
		bad       int      // a block of the page whose read fails, or -1
		wantBios  uint64   // read bios of the read(2)
		wantBits  uint64   // EvBHBit of the read(2)
		uptodate  bool     // the folio after the read(2)
		wantError bool
	}{
		// getblk mapped every buffer of the folio. Each one read costs
		// mark_buffer_async_read, test_set_buffer_req, and at its
		// completion set_buffer_uptodate (clear_buffer_uptodate if it
		// failed) and clear_buffer_async_read: 4.
		{"a middle buffer read before: the other seven", []uint64{3}, -1, -1, 7, 7 * 4, true, false},
		{"the ring's head read before: the other seven", []uint64{0}, -1, -1, 7, 7 * 4, true, false},
		{"every buffer read before: no I/O", []uint64{0, 1, 2, 3, 4, 5, 6, 7}, -1, -1, 0, 0, true, false},
		{"one read fails: the folio is not uptodate", []uint64{0}, -1, 6, 7, 7 * 4, false, true},
		{"the last read to complete fails", []uint64{0}, -1, 7, 7, 7 * 4, false, true},
		// A partial write maps only the block it writes: each of the other
		// seven is mapped by the read (set_buffer_mapped) first: 5.
		{"a block written in part before: the other seven, mapped first", nil, 2, -1, 7, 7 * 5, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const size = 64 << 10
			old := randomBytes(11, size)
			s := newFaultStack(t, size, bs, true, 1, old)
			cpu := s.m.CPU(0)
			first := uint64(page * 4096 / bs)
			for _, b := range tc.bread {
				bh, err := s.d.Bread(cpu, first+b, bs)
				require.NoError(t, err)
				Brelse(cpu, bh)
			}
			if tc.partial >= 0 {
				at := page*4096 + tc.partial*bs + 100
				msg := []byte("a partial write")
				_, err := s.d.Write(cpu, uint64(at), userIter(t, msg))
				require.NoError(t, err)
				copy(old[at:], msg)
			}
			f := s.d.PeekFolio(page * 4096)
			require.NotNil(t, f)
			require.False(t, f.Has(FolioUptodate), "Bread leaves the folio as it was")
			if tc.bad >= 0 {
				sector := (first + uint64(tc.bad)) * bs >> blk.SectorShift
				require.NoError(t, s.fd.FailSectors(blk.OpRead, sector, sector+1))
			}
			reads, ev := s.fd.Stats().Reads, cpu.Events()
			got := make([]byte, 4096)
			_, err := s.d.Read(cpu, page*4096, got)
			if tc.wantError {
				assert.ErrorIs(t, err, ErrIO)
			} else {
				require.NoError(t, err)
				assert.Equal(t, old[page*4096:(page+1)*4096], got)
			}
			assert.Equal(t, tc.wantBios, s.fd.Stats().Reads-reads, "read bios")
			spent := cpu.Events().Sub(ev)
			assert.Equal(t, tc.wantBits, spent[EvBHBit], "bh bit operations")
			// The lookup's lock, and the lock taken again after the last
			// completion unlocked the folio (v5.10's read path; v6.x waits
			// for the unlock instead).
			wantLocks := uint64(1)
			if tc.wantBios > 0 {
				wantLocks = 2
			}
			assert.Equal(t, wantLocks, spent[EvFolioLock], "folio locks")
			assert.Equal(t, uint64(btoi(tc.bad >= 0)), spent[EvWarning], "a failed read warns once")
			assert.Equal(t, tc.uptodate, f.Has(FolioUptodate))
			assert.False(t, f.Has(FolioLocked), "the folio is unlocked")
			for i, bh := range ring(f.private) {
				assert.False(t, bh.Has(BHLock|BHAsyncRead), "buffer %d: %s", i, bh.State())
				assert.Equal(t, i != tc.bad, bh.Has(BHUptodate), "buffer %d uptodate", i)
			}
			require.NoError(t, s.m.Check())
			if tc.bad >= 0 { // healed, the next read reads only the failed buffer
				s.fd.Heal()
				reads := s.fd.Stats().Reads
				_, err := s.d.Read(cpu, page*4096, got)
				require.NoError(t, err)
				assert.Equal(t, old[page*4096:(page+1)*4096], got)
				assert.Equal(t, uint64(1), s.fd.Stats().Reads-reads)
				assert.True(t, f.Has(FolioUptodate))
			}
		})
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReadFullFolioRacedBuffer: a buffer that another task holds locked,
// fills, makes uptodate and dirties while the reader of its folio waits for
// its lock is not read from the disk over the new data (the re-check after
// lock_buffer); the other seven are read.
func TestReadFullFolioRacedBuffer(t *testing.T) {
	m, d, disk := newDev(t, Config{CPUs: 2, Check: true}, 64<<10, 512, DeviceOptions{})
	writer, reader := m.CPU(0), m.CPU(1)
	require.NoError(t, d.SetBlocksize(writer, 512))
	const page = 5
	first := uint64(page * 4096 / 512)
	bh, err := d.Getblk(writer, first+3, 512)
	require.NoError(t, err)
	LockBuffer(writer, bh)
	f := bh.Folio()
	reads := disk.Stats().Reads
	got := make([]byte, 4096)
	done := make(chan error, 1)
	go func() { _, err := d.Read(reader, page*4096, got); done <- err }()
	// Buffers 0 to 2 are marked for the async read: the reader waits for 3.
	deadline := time.Now().Add(10 * time.Second)
	for !f.private.Next().Next().Has(BHAsyncRead) {
		require.True(t, time.Now().Before(deadline), "the reader reached buffer 2")
		time.Sleep(time.Millisecond)
	}
	pattern := bytes.Repeat([]byte{0xab}, 512)
	copy(bh.Data(), pattern)
	bh.SetUptodate(writer)
	MarkBufferDirty(writer, bh)
	UnlockBuffer(writer, bh)
	require.NoError(t, <-done)
	assert.Equal(t, pattern, got[3*512:4*512], "the new data, not the disk's")
	assert.Equal(t, uint64(7), disk.Stats().Reads-reads, "the seven other buffers")
	assert.True(t, bh.Has(BHDirty), "still dirty")
	Brelse(writer, bh)
	require.NoError(t, m.Check())
}
