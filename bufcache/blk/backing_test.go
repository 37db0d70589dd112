package blk

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill returns n bytes of v.
func fill(v byte, n int) []byte { return bytes.Repeat([]byte{v}, n) }

// TestBackingFullMemDisk checks SetBackingFull on bios submitted to the disk
// directly: exactly the writes that reach a never-written 4 KiB page fail, with
// ENOSPC, after writing what lies before that page.
func TestBackingFullMemDisk(t *testing.T) {
	tests := []struct {
		name    string
		sector  uint64
		n       int
		err     bool
		written int // bytes of the write that reached the disk
	}{
		{"an allocated page", 0, 4096, false, 4096},
		{"part of an allocated page", 3, 512, false, 512},
		{"a never-written page", 16, 4096, true, 0},
		{"allocated then not", 0, 8192, true, 4096},
		{"from the middle of an allocated page into a new one", 4, 4096, true, 2048},
		{"the second allocated page", 24, 4096, false, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disk, err := NewMemDisk("loop8", 1<<20, 512)
			require.NoError(t, err)
			c := newCompletions()
			// Pages 0 and 3 were written before the store filled up.
			for i, s := range []uint64{0, 24} {
				w := c.bio(100+i, OpWrite, s)
				w.AddVec(fill(1, 4096), 4096)
				disk.Submit(w)
			}
			disk.SetBackingFull(true)
			w := c.bio(0, OpWrite, tc.sector)
			w.AddVec(fill(2, tc.n), uint32(tc.n))
			disk.Submit(w)
			if tc.err {
				require.ErrorIs(t, c.errs[0], ErrNoSpace)
				assert.Equal(t, ErrnoNoSpace, Errno(c.errs[0]))
				assert.Equal(t, uint64(1), disk.Stats().Errors)
			} else {
				require.NoError(t, c.errs[0])
			}
			got := make([]byte, tc.n)
			_, err = disk.ReadAt(got, int64(tc.sector<<SectorShift))
			require.NoError(t, err)
			assert.Equal(t, fill(2, tc.written), got[:tc.written], "written before the first new page")
			for i, v := range got[tc.written:] {
				pos := int(tc.sector<<SectorShift) + tc.written + i
				want := byte(0)
				if pos < 4096 || pos >= 3*4096 && pos < 4*4096 {
					want = 1
				}
				require.Equal(t, want, v, "byte %d: the old contents", pos)
			}
			assert.Equal(t, uint64(2*4096), disk.StoredBytes(), "nothing new allocated")

			// Reads of never-written pages return zeroes; room again, the write goes through.
			r := c.bio(1, OpRead, 64)
			buf := fill(9, 4096)
			r.AddVec(buf, 4096)
			disk.Submit(r)
			require.NoError(t, c.errs[1])
			assert.Equal(t, make([]byte, 4096), buf)
			disk.SetBackingFull(false)
			w2 := c.bio(2, OpWrite, tc.sector)
			w2.AddVec(fill(3, tc.n), uint32(tc.n))
			disk.Submit(w2)
			assert.NoError(t, c.errs[2])
		})
	}
}

// TestBackingSizeMemDisk checks SetBackingSize: with pages 0 and 3
// written, a store of N pages takes writes that allocate up to N pages in
// all, and fails the first that would allocate one more, after writing the
// bytes before that page; pages already held are always written.
func TestBackingSizeMemDisk(t *testing.T) {
	tests := []struct {
		name    string
		size    uint64 // the store's size in bytes
		sector  uint64
		n       int
		err     bool
		written int
		stored  uint64 // pages held afterwards
	}{
		{"room for two more: two new pages", 4 * 4096, 8, 8192, false, 8192, 4},
		{"room for one more: the second new page fails", 3 * 4096, 8, 8192, true, 4096, 3},
		{"no room: a new page fails", 2 * 4096, 8, 4096, true, 0, 2},
		{"no room: a held page is written", 2 * 4096, 24, 4096, false, 4096, 2},
		{"smaller than held: full at once", 4096, 8, 512, true, 0, 2},
		{"rounded down to pages", 3*4096 + 4095, 8, 8192, true, 4096, 3},
		{"no limit", 0, 8, 16384, false, 16384, 5}, // pages 1 to 4, 3 held
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disk, err := NewMemDisk("loop8", 1<<20, 512)
			require.NoError(t, err)
			c := newCompletions()
			for i, s := range []uint64{0, 24} {
				w := c.bio(100+i, OpWrite, s)
				w.AddVec(fill(1, 4096), 4096)
				disk.Submit(w)
			}
			disk.SetBackingSize(tc.size)
			w := c.bio(0, OpWrite, tc.sector)
			w.AddVec(fill(2, tc.n), uint32(tc.n))
			disk.Submit(w)
			if tc.err {
				require.ErrorIs(t, c.errs[0], ErrNoSpace)
			} else {
				require.NoError(t, c.errs[0])
			}
			got := make([]byte, tc.n)
			_, err = disk.ReadAt(got, int64(tc.sector<<SectorShift))
			require.NoError(t, err)
			assert.Equal(t, fill(2, tc.written), got[:tc.written], "written before the first page without room")
			assert.Equal(t, tc.stored*4096, disk.StoredBytes())
		})
	}
}

// Metadata-only writes allocate nothing, so under a full store they fail.
func TestBackingFullMetadataOnly(t *testing.T) {
	disk, err := NewMemDisk("loop8", 1<<20, 512)
	require.NoError(t, err)
	c := newCompletions()
	disk.Submit(c.pageBio(0, OpWrite, 0, 4096, 1, 0))
	require.NoError(t, c.errs[0])
	disk.SetBackingFull(true)
	disk.Submit(c.pageBio(1, OpWrite, 0, 4096, 1, 0))
	assert.ErrorIs(t, c.errs[1], ErrNoSpace)
}

// Through a queue the failure is the request's: every bio merged into it
// completes with ENOSPC, and a split bio fails if one part does.
func TestBackingFullQueue(t *testing.T) {
	tests := []struct {
		name    string
		pages   []uint64 // 4 KiB writes, by page, in one plug
		failed  []int    // the bios that fail
		rqs     uint64
		rqFails uint64
	}{
		{"allocated pages merge and succeed", []uint64{0, 1}, nil, 1, 0},
		{"a request with a new page fails whole", []uint64{0, 1, 2, 3}, []int{0, 1, 2, 3}, 1, 1},
		{"separate requests fail apart", []uint64{0, 5, 1}, []int{1}, 3, 1}, // 6.18 tries only the newest
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, log := tracedQueue(t, LoopLimits(512))
			c := newCompletions()
			for i, pg := range []uint64{0, 1} { // allocated before
				w := c.bio(100+i, OpWrite, pg*8)
				w.AddVec(fill(1, 4096), 4096)
				q.Submit(w)
			}
			q.store.SetBackingFull(true)
			before := q.Stats().Write
			*log = nil
			var p Plug
			p.Start()
			for i, pg := range tc.pages {
				w := c.bio(i, OpWrite, pg*8)
				w.Flags = FlagSync
				w.AddPage(fill(2, 4096), 4096, 1000+3*uint64(i), 0)
				SubmitBio(&p, q, w)
			}
			require.NoError(t, p.Finish())
			var failed []int
			for i := range tc.pages {
				if c.errs[i] != nil {
					assert.ErrorIs(t, c.errs[i], ErrNoSpace)
					failed = append(failed, i)
				}
			}
			assert.Equal(t, tc.failed, failed)
			st := q.Stats().Write
			assert.Equal(t, tc.rqs, st.Requests-before.Requests)
			assert.Equal(t, tc.rqFails, st.Failed)
			var errnos []int
			for _, e := range *log {
				if e.Kind == cpl && e.Err != nil {
					errnos = append(errnos, Errno(e.Err))
				}
			}
			assert.Len(t, errnos, int(tc.rqFails))
			for _, e := range errnos {
				assert.Equal(t, 28, e)
			}
		})
	}
}

func TestBackingFullSplitBio(t *testing.T) {
	lim := LoopLimits(512)
	lim.MaxSectors = 16 // 8 KiB requests
	q := newQueue(t, "loop8", 1<<20, Null{}, lim)
	c := newCompletions()
	pre := c.bio(0, OpWrite, 0)
	pre.AddVec(fill(1, 8192), 8192)
	q.Submit(pre)
	require.NoError(t, c.errs[0])
	q.store.SetBackingFull(true)
	b := c.bio(1, OpWrite, 0)
	b.AddPage(fill(2, 16384), 16384, 500, 0) // parts [0, 8K) allocated, [8K, 16K) not
	q.Submit(b)
	require.Equal(t, 1, c.count[1], "completes once")
	assert.ErrorIs(t, c.errs[1], ErrNoSpace, "the failed part fails the bio")
	st := q.Stats().Write
	assert.Equal(t, uint64(1), st.Splits)
	assert.Equal(t, uint64(1), st.Failed)
	got := make([]byte, 8192)
	_, err := q.store.ReadAt(got, 0)
	require.NoError(t, err)
	assert.Equal(t, fill(2, 8192), got, "the first part was written")
	assert.Equal(t, BlockStat{WriteIOs: 3, WriteSectors: 16 + 32}, q.BlockStat(), "a failed request is a completed I/O")
}

// FuzzBackingFull drives a MemDisk with writes, reads and switches of the
// backing store, against an oracle of allocated pages and contents.
func FuzzBackingFull(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 3, 4, 1, 5, 0, 2, 2, 7})
	f.Add([]byte{2, 0, 0, 0, 9, 2, 1, 1, 2, 2, 255, 1, 3, 7, 0})
	f.Add(bytes.Repeat([]byte{0, 17, 3, 1, 2}, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		const size = 64 << 10
		disk, err := NewMemDisk("loop8", size, 512)
		require.NoError(t, err)
		flat := make([]byte, size)
		allocated := make([]bool, size/BackingPageSize)
		full := false
		in := byteReader(data)
		for steps := 0; len(in) > 0 && steps < 300; steps++ {
			op, at, n := in.next()%4, uint64(in.next())%(size>>SectorShift), 512*(1+int(in.next()%24))
			n = min(n, size-int(at<<SectorShift))
			switch op {
			case 0, 1: // a write
				pos := int(at << SectorShift)
				buf := fill(byte(steps+1), n)
				var b Bio
				b.Reset(OpWrite, at)
				b.AddVec(buf, uint32(n))
				var got error
				b.EndIO = func(b *Bio) { got = b.Err }
				disk.Submit(&b)
				stop := pos + n // the oracle: written up to the first new page
				if full {
					for p := pos / BackingPageSize; p*BackingPageSize < pos+n; p++ {
						if !allocated[p] {
							stop = max(p*BackingPageSize, pos)
							break
						}
					}
				}
				copy(flat[pos:stop], buf)
				for p := pos / BackingPageSize; stop > pos && p*BackingPageSize < stop; p++ {
					allocated[p] = true
				}
				if stop < pos+n {
					require.ErrorIs(t, got, ErrNoSpace)
				} else {
					require.NoError(t, got)
				}
			case 2: // a read
				pos := int(at << SectorShift)
				var b Bio
				b.Reset(OpRead, at)
				buf := fill(0xff, n)
				b.AddVec(buf, uint32(n))
				var got error
				b.EndIO = func(b *Bio) { got = b.Err }
				disk.Submit(&b)
				require.NoError(t, got)
				require.Equal(t, flat[pos:pos+n], buf)
			default:
				full = !full
				disk.SetBackingFull(full)
			}
		}
		var pages uint64
		for _, a := range allocated {
			if a {
				pages++
			}
		}
		require.Equal(t, pages*BackingPageSize, disk.StoredBytes())
		got := make([]byte, size)
		_, err = disk.ReadAt(got, 0)
		require.NoError(t, err)
		require.Equal(t, flat, got)
	})
}
