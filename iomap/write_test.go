package iomap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/race"
)

// TestBlkdevWriteEntryChecks: blkdev_write_iter's checks give the same
// results on both write paths.
func TestBlkdevWriteEntryChecks(t *testing.T) {
	const size = 1 << 20
	for _, k := range kernels {
		for _, tc := range []struct {
			name    string
			pos     uint64
			n       int
			ro      bool
			want    uint64
			wantErr error
		}{
			{"empty write", 0, 0, false, 0, nil},
			{"empty write at the end", size, 0, false, 0, nil},
			{"read-only device", 0, 10, true, 0, bufcache.ErrReadOnly},
			{"at the end", size, 10, false, 0, bufcache.ErrNoSpace},
			{"past the end", size + 4096, 10, false, 0, bufcache.ErrNoSpace},
			{"crossing the end is shortened", size - 100, 300, false, 100, nil},
			{"inside", 4096, 8192, false, 8192, nil},
		} {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				m, d, _ := newDev(t, bufcache.Config{}, size)
				d.SetReadOnly(tc.ro)
				it := userIter(t, make([]byte, tc.n))
				got, err := BlkdevWrite(d.Machine().CPU(0), d, tc.pos, it, k.opts)
				assert.Equal(t, tc.want, got)
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				} else {
					require.NoError(t, err)
					assert.Equal(t, uint64(tc.n)-got, it.Count(), "the iterator keeps what was not written")
				}
				require.NoError(t, m.Check())
			})
		}
	}
}

func TestBlkdevWriteBadOptions(t *testing.T) {
	m, d, _ := newDev(t, bufcache.Config{}, 1<<20)
	for _, o := range []Options{{Path: WritePath(5)}, {EOF: EOFCheck(5)}, {Chunk: ChunkPolicy(5)}} {
		n, err := BlkdevWrite(m.CPU(0), d, 0, userIter(t, make([]byte, 10)), o)
		assert.Zero(t, n)
		assert.ErrorIs(t, err, ErrBadOption, "%+v", o)
	}
	for _, chunk := range []uint64{0, 2048, 12288} {
		_, err := FileBufferedWrite(m.CPU(0), d, 0, userIter(t, make([]byte, 10)), BlkdevOps(EOFRaw), chunk)
		assert.ErrorIs(t, err, ErrBadOption, "chunk %d", chunk)
	}
	assert.Equal(t, "path(5)", WritePath(5).String())
	assert.Equal(t, "buffer_head", PathBufferHead.String())
}

// TestBlkdevWriteOracle writes random ranges of random bytes and checks the
// disk after sync against a flat array, for every kernel of Xu Yang's table,
// both EOF checks, and every block size, with a dirty limit so that
// writeback runs in the middle of writes.
func TestBlkdevWriteOracle(t *testing.T) {
	const size = 512 << 10
	for _, k := range kernels {
		for _, eof := range []EOFCheck{EOFAligned, EOFRaw} {
			for _, bsize := range []uint32{512, 1024, 4096} {
				t.Run(fmt.Sprintf("kernel=%s/eof=%s/bsize=%d", k.name, eof, bsize), func(t *testing.T) {
					seed := uint64(bsize)*31 + uint64(eof)
					t.Logf("seed %d", seed)
					rng := rand.New(rand.NewPCG(seed, 2))
					m, d, disk := newDev(t, bufcache.Config{InitBlocksize: blocksize.PolicyLogical, DirtyLimit: 16}, size)
					cpu := m.CPU(0)
					require.NoError(t, d.SetBlocksize(cpu, bsize))
					opts := k.opts
					opts.EOF = eof
					want := make([]byte, size)
					for i := range 40 {
						pos := rng.Uint64N(size)
						n := 1 + rng.IntN(3<<20/40*(i%3)+9000) // some writes larger than a 2 MiB chunk's share
						data := pattern(n, byte(rng.Uint32()))
						got, err := BlkdevWrite(cpu, d, pos, userIter(t, data), opts)
						require.NoError(t, err)
						require.Equal(t, min(uint64(n), size-pos), got)
						copy(want[pos:], data[:got])
					}
					require.True(t, bytes.Equal(want, onDisk(t, cpu, d, disk)), "disk differs from the oracle")
					require.NoError(t, m.Check())
				})
			}
		}
	}
}

// TestBlkdevWriteUnreadable: a user buffer with an unreadable range gives
// the same result on every kernel: -EFAULT if the write starts there, else a
// short write up to the first unreadable byte, whose data reach the disk.
func TestBlkdevWriteUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pos, n       uint64
		badOff, badN uint64
		want         uint64
		wantErr      error
		iters        uint64 // write_begin/copy/write_end rounds (EvWriteIter) of generic_perform_write
	}{
		{name: "unreadable from the start", pos: 0, n: 8192, badOff: 0, badN: 4096, wantErr: bufcache.ErrFault, iters: 1},
		{name: "unreadable from a page boundary", pos: 0, n: 16384, badOff: 8192, badN: 100, want: 8192, iters: 3},
		{name: "unreadable mid-page: short copy, retried with what was copied", pos: 0, n: 6000, badOff: 5000, badN: 1,
			want: 5000, iters: 4},
		{name: "unaligned write position", pos: 100, n: 9000, badOff: 4500, badN: 10, want: 4500, iters: 4},
		{name: "unreadable past the write", pos: 4096, n: 4096, badOff: 4096, badN: 4096, want: 4096, iters: 1},
	} {
		for _, k := range kernels {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				m, d, disk := newDev(t, bufcache.Config{}, 1<<20)
				cpu := m.CPU(0)
				data := pattern(int(tc.n), 9)
				u := bufcache.NewUserBuf(data, 0, 4096)
				u.SetUnreadable(tc.badOff, tc.badN)
				it, err := u.Iter(0, tc.n)
				require.NoError(t, err)
				got, err := BlkdevWrite(cpu, d, tc.pos, it, k.opts)
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.n-got, it.Count())
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				} else {
					assert.NoError(t, err)
				}
				iters := tc.iters
				if k.opts.Path == PathIomap && got > 0 && got < tc.n {
					// iomap_write_iter returns its progress; iomap_iter then
					// maps the rest, and a second iomap_write_iter meets the
					// fault.
					iters++
				}
				assert.Equal(t, iters, cpu.Events()[bufcache.EvWriteIter])
				want := make([]byte, d.Size())
				copy(want[tc.pos:], data[:got])
				assert.True(t, bytes.Equal(want, onDisk(t, cpu, d, disk)), "disk differs from the oracle")
			})
		}
	}
}

// faultInPages is the oracle for the pre-fault cost: it walks a write of n
// bytes at pos (user buffer page-aligned) with the given chunk, one page per
// iteration as the block device's mapping allows, and sums the user pages
// each iteration pre-faults.
func faultInPages(pos, n, chunk uint64) (faulted, pages uint64) {
	const ps = 4096
	for end := pos + n; pos < end; {
		bytes := min(chunk-pos%chunk, end-pos)
		user := pos - (end - n) // offset of pos in the user buffer
		faulted += (user+bytes-1)/ps - user/ps + 1
		pos += min(bytes, ps-pos%ps)
		pages++
	}
	return faulted, pages
}

// TestFaultInPerPage checks the pre-fault cost the regression is about. A
// 4500 KiB write at 0 (dd bs=4500K) is 1125 pages: with a 2 MiB chunk the
// k-th page of each 2 MiB window pre-faults the 512−k pages left in the
// window, 512·513/2 = 131328 per window, twice, then 101·102/2 = 5151 for the
// last 101 pages: 267807 pages, 238 per page written. The fix and the
// buffer_head path pre-fault exactly the page they write.
func TestFaultInPerPage(t *testing.T) {
	const k4 = 4096
	for _, tc := range []struct {
		name        string
		opts        Options
		pos, n      uint64
		faulted     uint64
		pagesCopied uint64
	}{
		{"6.6/dd bs=4500K", Options{}, 0, 4500 << 10, 2*131328 + 5151, 1125},
		{"6.6-fix/dd bs=4500K", Options{Chunk: ChunkMappingMaxFolioSize}, 0, 4500 << 10, 1125, 1125},
		{"6.6-revert/dd bs=4500K", Options{Path: PathBufferHead}, 0, 4500 << 10, 1125, 1125},
		{"6.6/dd bs=400K", Options{}, 0, 400 << 10, 100 * 101 / 2, 100},
		{"6.6/dd bs=400K, 6th write: 12 pages to the window's end, then a new window", Options{}, 5 * 400 << 10, 400 << 10, 12*13/2 + 88*89/2, 100},
		{"6.6/crossing a 2 MiB boundary", Options{}, 2<<20 - 2*k4, 4 * k4, 2 + 1 + 2 + 1, 4},
		{"6.6/unaligned", Options{}, 100, 3 * k4, 3 + 3 + 2 + 1, 4},
		{"6.6-fix/unaligned: the page's bytes span two user pages", Options{Chunk: ChunkMappingMaxFolioSize}, 100, 3 * k4, 1 + 2 + 2 + 1, 4},
		{"6.6-revert/unaligned", Options{Path: PathBufferHead}, 100, 3 * k4, 1 + 2 + 2 + 1, 4},
		{"6.6 without THP (1 MiB chunk)", Options{NoTHP: true}, 0, 2 << 20, 2 * 256 * 257 / 2, 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, bufcache.Config{}, 8<<20)
			cpu := m.CPU(0)
			n, err := BlkdevWrite(cpu, d, tc.pos, userIter(t, make([]byte, tc.n)), tc.opts)
			require.NoError(t, err)
			require.Equal(t, tc.n, n)
			ev := cpu.Events()
			assert.Equal(t, tc.faulted, ev[bufcache.EvFaultInPage], "user pages pre-faulted")
			assert.Equal(t, tc.pagesCopied, ev[bufcache.EvWriteIter], "one page per iteration")
			if tc.opts.Path == PathIomap {
				chunk, err := tc.opts.ChunkSize(4096)
				require.NoError(t, err)
				f, p := faultInPages(tc.pos, tc.n, chunk)
				assert.Equal(t, f, ev[bufcache.EvFaultInPage], "the walk of the algorithm agrees")
				assert.Equal(t, p, tc.pagesCopied)
				assert.Equal(t, uint64(1), ev[bufcache.EvIomapBegin], "one mapping serves the whole write(2)")
			}
		})
	}
	perPage := float64(2*131328+5151) / 1125
	assert.Greater(t, perPage, 200.0, "6.6 pre-faults far more than the page it writes")
}

// newOps is blkdev_iomap_ops returning mappings marked new (IOMAP_F_NEW), as a
// file system does for blocks it just allocated.
type newOps struct{ BlkdevOps }

func (o newOps) Begin(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos, length uint64, flags IterFlags) (IOMap, error) {
	m, err := o.BlkdevOps.Begin(cpu, d, pos, length, flags)
	m.Flags |= FNew
	return m, err
}

// TestNewBuffersAreZeroedNotRead: iomap_to_bh marks the buffers of an
// IOMAP_F_NEW mapping new, so __block_write_begin_int zeroes the rest of a
// partly written block instead of reading it, and a short copy zeroes the
// part of a new block not copied; in an uptodate folio a new buffer keeps the
// folio's data.
func TestNewBuffersAreZeroedNotRead(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cached           bool   // a buffered read(2) caches the folio first: uptodate, no buffers
		badOff           uint64 // unreadable user offset (0: none)
		pos, n           uint64
		wantN            uint64
		zeroFrom, zeroTo uint64 // device bytes that must read as zeros afterwards
	}{
		{name: "partial block, not cached", pos: 3*4096 + 10, n: 5, wantN: 5, zeroFrom: 3 * 4096, zeroTo: 4 * 4096},
		{name: "partial block, folio uptodate", cached: true, pos: 3*4096 + 10, n: 5, wantN: 5},
		{name: "short copy into a new block", badOff: 100, pos: 3 * 4096, n: 200, wantN: 100, zeroFrom: 3 * 4096, zeroTo: 4 * 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, disk := newDev(t, bufcache.Config{}, 1<<20)
			cpu := m.CPU(0)
			old := bytes.Repeat([]byte{0xee}, 1<<20)
			_, err := d.Write(cpu, 0, userIter(t, old))
			require.NoError(t, err)
			require.NoError(t, d.SyncBlockdev(cpu))
			dropCache(t, cpu, d)
			if tc.cached {
				_, err := d.Read(cpu, tc.pos&^4095, make([]byte, 4096))
				require.NoError(t, err)
			}
			reads := disk.Stats().Reads
			data := pattern(int(tc.n), 5)
			u := bufcache.NewUserBuf(data, 0, 4096)
			if tc.badOff > 0 {
				u.SetUnreadable(tc.badOff, 1)
			}
			it, err := u.Iter(0, tc.n)
			require.NoError(t, err)
			n, err := FileBufferedWrite(cpu, d, tc.pos, it, newOps{BlkdevOps(EOFRaw)}, 2<<20)
			require.NoError(t, err)
			assert.Equal(t, tc.wantN, n)
			assert.Equal(t, reads, disk.Stats().Reads, "a new block is never read")
			want := bytes.Clone(old)
			clear(want[tc.zeroFrom:tc.zeroTo])
			copy(want[tc.pos:], data[:n])
			assert.True(t, bytes.Equal(want, onDisk(t, cpu, d, disk)), "disk differs from the oracle")
			require.NoError(t, m.Check())
		})
	}
}

// badOps returns a fixed mapping, whatever the position.
type badOps struct{ m IOMap }

func (o badOps) Begin(*bufcache.CPU, *bufcache.BlockDevice, uint64, uint64, IterFlags) (IOMap, error) {
	return o.m, nil
}

func (badOps) End(*bufcache.CPU, *bufcache.BlockDevice, uint64, uint64, uint64, IterFlags, IOMap) error {
	return nil
}

// TestUnusableMappings: mappings the write path cannot take fail the write
// with an error, release the folio and leave the page cache consistent. A
// mapping that starts after the position is only a WARN, as in the kernel,
// and the identity mapping still writes the right block.
func TestUnusableMappings(t *testing.T) {
	const mib = 1 << 20
	bh := FBufferHead
	for _, tc := range []struct {
		name     string
		m        IOMap
		pos      uint64
		wantErr  error
		wantN    uint64
		warnings uint64
	}{
		{"a hole", IOMap{Length: mib, Type: Hole, Flags: bh}, 0, ErrNotModelled, 0, 0},
		{"unwritten", IOMap{Length: mib, Type: Unwritten, Flags: bh}, 0, ErrNotModelled, 0, 0},
		{"inline", IOMap{Length: mib, Type: Inline, Flags: bh}, 0, ErrNotModelled, 0, 0},
		{"without buffer heads", IOMap{Length: mib, Type: Mapped}, 0, ErrNotModelled, 0, 0},
		{"not the identity", IOMap{Length: mib, Addr: 4096, Type: Mapped, Flags: bh}, 0, ErrNotModelled, 0, 0},
		{"ending before the position", IOMap{Length: 4096, Type: Mapped, Flags: bh}, 8192, ErrInvalidMapping, 0, 1},
		{"ending inside the write: the rest gets the same mapping, ending at pos (WARN, then -EFAULT)",
			IOMap{Length: 4096 + 50, Type: Mapped, Flags: bh}, 4096, nil, 50, 1},
		{"starting after the position", IOMap{Offset: 8192, Length: mib, Addr: 8192, Type: Mapped, Flags: bh}, 0, nil, 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, bufcache.Config{}, mib)
			cpu := m.CPU(0)
			n, err := FileBufferedWrite(cpu, d, tc.pos, userIter(t, make([]byte, 100)), badOps{tc.m}, 4096)
			assert.Equal(t, tc.wantN, n)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.warnings, cpu.Events()[bufcache.EvWarning])
			require.NoError(t, m.Check())
			n, err = BlkdevWrite(cpu, d, tc.pos, userIter(t, make([]byte, 100)), Options{})
			require.NoError(t, err, "the folio was released: a later write goes through")
			assert.Equal(t, uint64(100), n)
		})
	}
}

// TestWriteAllocatesNothing: past the user-buffer iterator, a write(2)
// through either path allocates nothing once the page cache is warm.
func TestWriteAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			m, d, _ := newDev(t, bufcache.Config{}, 1<<20)
			cpu := m.CPU(0)
			u := bufcache.NewUserBuf(make([]byte, 64<<10), 0, 4096)
			allocs := testing.AllocsPerRun(50, func() {
				it, _ := u.Iter(0, 64<<10) // the one allocation: the iterator
				if _, err := BlkdevWrite(cpu, d, 4096, it, k.opts); err != nil {
					t.Fatal(err)
				}
			})
			assert.Equal(t, 1.0, allocs)
		})
	}
}

// TestConcurrentWriters drives four CPUs writing disjoint ranges through the
// iomap path at once, then checks the disk against the oracle.
func TestConcurrentWriters(t *testing.T) {
	const per = 256 << 10
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			cfg := bufcache.Config{CPUs: 4, DirtyLimit: 32}
			m, d, disk := newDev(t, cfg, 4*per)
			want := make([]byte, 4*per)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for c := range 4 {
				data := pattern(per, byte(c+1))
				copy(want[c*per:], data)
				wg.Go(func() {
					cpu := m.CPU(c)
					for off := 0; off < per; off += 40000 {
						n := min(40000, per-off)
						it, err := bufcache.NewUserBuf(data[off:off+n], 0, 4096).Iter(0, uint64(n))
						if err == nil {
							_, err = BlkdevWrite(cpu, d, uint64(c*per+off), it, k.opts)
						}
						if err != nil {
							errs[c] = err
							return
						}
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			assert.True(t, bytes.Equal(want, onDisk(t, m.CPU(0), d, disk)), "disk differs from the oracle")
			require.NoError(t, m.Check())
		})
	}
}

// TestHookMisuse: bufcache's extension points refuse a write_begin range
// outside the folio, releasing the folio, and copy nothing past its end.
func TestHookMisuse(t *testing.T) {
	m, d, _ := newDev(t, bufcache.Config{}, 1<<20)
	cpu := m.CPU(0)
	for _, tc := range []struct{ pos, n uint64 }{{4096, 0}, {4000, 200}, {8192, 4097}} {
		f := d.GetWriteFolio(cpu, 4096, 4096)
		err := d.BlockWriteBegin(cpu, f, tc.pos, tc.n, nil)
		assert.ErrorIs(t, err, bufcache.ErrBadRange, "[%d, +%d)", tc.pos, tc.n)
	}
	f := d.GetWriteFolio(cpu, 4096, 4096)
	require.NoError(t, d.BlockWriteBegin(cpu, f, 4096, 4096, nil))
	it := userIter(t, make([]byte, 100))
	assert.Zero(t, it.CopyToFolio(cpu, f, 4096, 100), "nothing past the folio")
	assert.Equal(t, uint64(96), it.CopyToFolio(cpu, f, 4000, 100), "up to its end")
	assert.Equal(t, uint64(96), d.WriteEnd(cpu, f, 4096+4000, 96, 96))
	require.NoError(t, m.Check())
	n, err := BlkdevWrite(cpu, d, 4096, userIter(t, make([]byte, 8192)), Options{})
	require.NoError(t, err, "no folio was left locked")
	assert.Equal(t, uint64(8192), n)
}
