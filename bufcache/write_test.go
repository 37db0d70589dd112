package bufcache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// userIter returns an iterator over all of data.
func userIter(t testing.TB, data []byte) *IovIter {
	it, err := NewUserBuf(data, 0, 4096).Iter(0, uint64(len(data)))
	require.NoError(t, err)
	return it
}

func TestWriteEntryChecks(t *testing.T) {
	const size = 1 << 20
	for _, tc := range []struct {
		name    string
		pos     uint64
		n       int
		ro      bool
		want    uint64
		wantErr error
	}{
		{"empty write", 0, 0, false, 0, nil},
		{"read-only device", 0, 10, true, 0, ErrReadOnly},
		{"at the end", size, 10, false, 0, ErrNoSpace},
		{"past the end", size + 4096, 10, false, 0, ErrNoSpace},
		{"crossing the end is shortened", size - 100, 300, false, 100, nil},
		{"inside", 4096, 8192, false, 8192, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, Config{Check: true}, size, 512, DeviceOptions{ReadOnly: tc.ro})
			it := userIter(t, make([]byte, tc.n))
			got, err := d.Write(m.CPU(0), tc.pos, it)
			assert.Equal(t, tc.want, got)
			if tc.wantErr == nil {
				assert.Equal(t, uint64(tc.n)-got, it.Count(), "the iterator keeps what was not written (iov_iter_reexpand)")
			}
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// TestWriteRoundTrip writes random ranges of random bytes through the
// buffered write path and checks the disk after sync against a flat array, for
// every block size and both ring variants.
func TestWriteRoundTrip(t *testing.T) {
	const size = 256 << 10
	for _, variant := range []AllocVariant{AllocLinear, AllocCircular} {
		for _, bsize := range []uint32{512, 1024, 4096} {
			t.Run(fmt.Sprintf("variant=%s/bsize=%d", variant, bsize), func(t *testing.T) {
				seed := uint64(bsize) * 7919
				t.Logf("seed %d", seed)
				rng := rand.New(rand.NewPCG(seed, 1))
				m, d, disk := newDev(t, Config{Alloc: variant, InitBlocksize: blocksize.PolicyLogical, DirtyLimit: 16, Check: true}, size, 512, DeviceOptions{})
				cpu := m.CPU(0)
				require.NoError(t, d.SetBlocksize(cpu, bsize))
				want := make([]byte, size)
				for range 60 {
					pos := rng.Uint64N(size)
					n := 1 + rng.IntN(20000)
					data := make([]byte, n)
					for i := range data {
						data[i] = byte(rng.Uint32())
					}
					got, err := d.Write(cpu, pos, userIter(t, data))
					require.NoError(t, err)
					copy(want[pos:], data[:got])
					require.Equal(t, min(uint64(n), size-pos), got)
				}
				require.NoError(t, d.SyncBlockdev(cpu))
				onDisk := make([]byte, size)
				_, err := disk.ReadAt(onDisk, 0)
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, onDisk), "disk differs from the oracle")
			})
		}
	}
}

// TestWritePartialBlockReadsFirst: a write covering part of a 4 KiB block reads
// the block first, so the rest of it survives.
func TestWritePartialBlockReadsFirst(t *testing.T) {
	m, d, disk := newDev(t, Config{Check: true}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	old := bytes.Repeat([]byte{0xee}, 4096)
	_, err := d.Write(cpu, 3*4096, userIter(t, old))
	require.NoError(t, err)
	require.NoError(t, d.SyncBlockdev(cpu))
	require.NoError(t, d.SetBlocksize(cpu, 1024)) // drop the cache
	require.NoError(t, d.SetBlocksize(cpu, 4096))
	reads := disk.Stats().Reads
	_, err = d.Write(cpu, 3*4096+10, userIter(t, []byte("hello")))
	require.NoError(t, err)
	assert.Equal(t, reads+1, disk.Stats().Reads, "the partially covered block was read")
	require.NoError(t, d.SyncBlockdev(cpu))
	got := make([]byte, 4096)
	_, err = disk.ReadAt(got, 3*4096)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got[10:15]))
	assert.Equal(t, byte(0xee), got[9])
	assert.Equal(t, byte(0xee), got[15])

	reads = disk.Stats().Reads
	_, err = d.Write(cpu, 5*4096, userIter(t, make([]byte, 4096)))
	require.NoError(t, err)
	assert.Equal(t, reads, disk.Stats().Reads, "a whole-block write reads nothing")
}

func TestWriteUnreadableUserBuffer(t *testing.T) {
	m, d, disk := newDev(t, Config{Check: true}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	data := bytes.Repeat([]byte{7}, 3*4096)
	u := NewUserBuf(data, 0, 4096)

	u.SetUnreadable(0, 100)
	it, err := u.Iter(0, uint64(len(data)))
	require.NoError(t, err)
	n, err := d.Write(cpu, 0, it)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ErrFault)

	u.SetUnreadable(5000, 100) // in the second page: the write stops there
	it, err = u.Iter(0, uint64(len(data)))
	require.NoError(t, err)
	n, err = d.Write(cpu, 0, it)
	assert.NoError(t, err)
	assert.Equal(t, uint64(5000), n)
	require.NoError(t, d.SyncBlockdev(cpu))
	got := make([]byte, 5001)
	_, err = disk.ReadAt(got, 0)
	require.NoError(t, err)
	assert.Equal(t, byte(7), got[4999])
	assert.Equal(t, byte(0), got[5000], "nothing past the unreadable byte")
}

// TestWritebackOneBioPerBuffer: writeback submits one bio per dirty buffer —
// 8 per page with 512-byte blocks, 1 with 4 KiB — and the buffered write
// pre-faults at most the one or two user pages of each page written.
func TestWritebackOneBioPerBuffer(t *testing.T) {
	for _, tc := range []struct {
		bsize uint32
		bios  uint64
	}{{512, 2048}, {1024, 1024}, {4096, 256}} {
		t.Run(fmt.Sprintf("bsize=%d", tc.bsize), func(t *testing.T) {
			m, d, _ := newDev(t, Config{InitBlocksize: blocksize.PolicyLogical}, 16<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			require.NoError(t, d.SetBlocksize(cpu, tc.bsize))
			before := cpu.Events()
			_, err := d.Write(cpu, 0, userIter(t, make([]byte, 1<<20)))
			require.NoError(t, err)
			require.NoError(t, d.SyncBlockdev(cpu))
			ev := cpu.Events().Sub(before)
			assert.Equal(t, tc.bios, ev[EvBioSubmit])
			assert.Equal(t, uint64(256), ev[EvWriteIter])
			assert.Equal(t, uint64(256), ev[EvFaultInPage], "one user page per page-aligned iteration")
			assert.Equal(t, uint64(256), ev[EvWritepage])
			assert.Equal(t, uint64(1<<20), ev[EvCopyByte])
		})
	}
}

func TestAsyncWriteErrorReportedOnce(t *testing.T) {
	m, d, disk := newFaultyDev(t, Config{Check: true})
	cpu := m.CPU(0)
	_, err := d.Write(cpu, 0, userIter(t, make([]byte, 8192)))
	require.NoError(t, err)
	disk.failWrite = true
	assert.ErrorIs(t, d.SyncBlockdev(cpu), ErrIO)
	assert.NoError(t, d.SyncBlockdev(cpu), "reported once")
	bh := d.FindGetBlock(cpu, 0, 4096)
	require.NotNil(t, bh)
	assert.True(t, bh.Has(BHWriteEIO))
	assert.False(t, bh.Has(BHUptodate))
	assert.False(t, bh.Folio().Has(FolioWriteback))
	Brelse(cpu, bh)
}

// TestBackgroundWritebackLeavesTheThreshold: background writeback writes
// range-cyclic chunks (writeback_chunk_size: the hard limit's eighth plus
// MIN_WRITEBACK_PAGES, rounded down to whole ones) while the device is over
// the threshold, so a long write leaves between a chunk below the threshold
// and the threshold dirty — the newest pages, each written once — instead of
// writing everything back each time.
func TestBackgroundWritebackLeavesTheThreshold(t *testing.T) {
	for _, tc := range []struct{ limit, chunk, pages int }{
		{4096, 2048, 16384},  // 16 MiB threshold: 1024 + 1024
		{16384, 5120, 40000}, // the Helios4's 64 MiB: 4096 + 1024
		{8, 1024, 4096},      // a chunk larger than the threshold writes all
	} {
		t.Run(fmt.Sprintf("limit=%d", tc.limit), func(t *testing.T) {
			require.Equal(t, tc.chunk, backgroundChunk(tc.limit))
			m, d, _ := newDev(t, Config{DirtyLimit: tc.limit, CPUs: 2, SeparateFlusher: true, FlusherCPU: 1},
				uint64(tc.pages)*4096, 4096, DeviceOptions{MetadataOnly: true})
			_, err := d.Write(m.CPU(0), 0, userIter(t, make([]byte, tc.pages*4096)))
			require.NoError(t, err)
			dirty := d.NrDirty()
			assert.LessOrEqual(t, dirty, tc.limit)
			assert.Greater(t, dirty, tc.limit-tc.chunk, "at most a chunk below the threshold")
			first, _, ok := d.mapping.index.NextMarked(0, pageindex.MarkDirty)
			require.True(t, ok)
			assert.Equal(t, uint64(tc.pages-dirty), first, "the dirty pages are the newest")
			assert.Equal(t, uint64(tc.pages-dirty), m.CPU(1).Events()[EvWritepage], "each older page written once")
		})
	}
}

func TestDirtyLimitStartsWriteback(t *testing.T) {
	m, d, disk := newDev(t, Config{DirtyLimit: 8, CPUs: 2, SeparateFlusher: true, FlusherCPU: 1}, 1<<20, 512, DeviceOptions{})
	_, err := d.Write(m.CPU(0), 0, userIter(t, make([]byte, 64<<10)))
	require.NoError(t, err)
	assert.NotZero(t, disk.Stats().Writes, "the writer crossed the limit")
	assert.Zero(t, m.CPU(0).Events()[EvBioSubmit], "writeback ran on the flusher's CPU")
	assert.NotZero(t, m.CPU(1).Events()[EvBioSubmit])
	assert.LessOrEqual(t, d.mapping.index.CountMarked(pageindex.MarkDirty), 9)
}

// TestPageCacheLimitReclaims: with a page-cache limit, a long write keeps the
// cache bounded by reclaiming clean folios (writeback cleans them first), frees
// their buffer heads into the per-CPU cache for reuse, and loses no data.
func TestPageCacheLimitReclaims(t *testing.T) {
	const size = 4 << 20
	m, d, disk := newDev(t, Config{PageCacheLimit: 64, DirtyLimit: 16, InitBlocksize: blocksize.PolicyLogical, Check: false}, size, 512, DeviceOptions{})
	cpu := m.CPU(0)
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7 / 4096)
	}
	n, err := d.Write(cpu, 0, userIter(t, data))
	require.NoError(t, err)
	require.Equal(t, uint64(size), n)
	assert.LessOrEqual(t, d.NrPages(), 64+reclaimBatch)
	ev := cpu.Events()
	assert.Greater(t, ev[EvFolioFree], uint64(800), "folios were reclaimed")
	assert.Greater(t, ev[EvBHFree], uint64(800*8), "their 8 buffer heads each were freed")
	require.NoError(t, d.SyncBlockdev(cpu))
	got := make([]byte, size)
	_, err = disk.ReadAt(got, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	require.NoError(t, m.Check())

	// Reading it all back through bread stays bounded too, and sees the data.
	for b := uint64(0); b < size/512; b += 37 {
		bh, err := d.Bread(cpu, b, 512)
		require.NoError(t, err)
		require.Equal(t, data[b*512:(b+1)*512], bh.Data())
		Brelse(cpu, bh)
	}
	assert.LessOrEqual(t, d.NrPages(), 64+reclaimBatch)
}

// TestKswapdReclaims: with Config.Kswapd the reclaim a full page cache
// needs is done on kswapd's CPU — the allocating CPU frees nothing — the
// cache stays as bounded as with direct reclaim, and every folio created is
// freed once, by kswapd while the write goes or by the last close's kill_bdev.
func TestKswapdReclaims(t *testing.T) {
	const size = 4 << 20
	for _, kswapd := range []bool{false, true} {
		t.Run(fmt.Sprintf("kswapd=%v", kswapd), func(t *testing.T) {
			cfg := Config{CPUs: 2, PageCacheLimit: 64, DirtyLimit: 16, InitBlocksize: blocksize.PolicyLogical, Kswapd: kswapd, KswapdCPU: 1}
			m, err := NewMachine(cfg)
			require.NoError(t, err)
			disk, err := blk.NewMemDisk("sda", size, 512)
			require.NoError(t, err)
			d, err := m.AddDisk(disk, DeviceOptions{MetadataOnly: true}) // nobody holds it open
			require.NoError(t, err)
			cpu, other := m.CPU(0), m.CPU(1)
			f, err := d.Open(cpu, OWrOnly)
			require.NoError(t, err)
			n, err := d.Write(cpu, 0, userIter(t, make([]byte, size)))
			require.NoError(t, err)
			require.Equal(t, uint64(size), n)
			assert.LessOrEqual(t, d.NrPages(), 64+reclaimBatch)
			writer, kswapd0 := cpu.Events(), other.Events()
			reclaimer := writer
			if kswapd {
				reclaimer = kswapd0
			}
			assert.Greater(t, reclaimer[EvFolioFree], uint64(800), "the reclaiming CPU freed the folios")
			assert.Greater(t, reclaimer[EvBHFree], uint64(800*8), "and their 8 buffer heads each")
			if kswapd {
				assert.Zero(t, writer[EvFolioFree], "the writer freed none")
				assert.Zero(t, writer[EvIndexDelete])
			}
			// The frames kswapd freed were handed to the writer's CPU and
			// reused: far fewer frames exist than the 1024 pages written.
			assert.Less(t, m.pfns.Load(), uint64(64+4*reclaimBatch), "frames reused")

			require.NoError(t, f.Close(cpu)) // the last close: sync and kill_bdev
			assert.Zero(t, d.NrFolios(), "kill_bdev dropped the page cache")
			all := m.Events()
			assert.Equal(t, all[EvIndexInsert], all[EvIndexDelete], "every folio left the cache once")
			assert.Equal(t, uint64(size/4096), all[EvIndexInsert])
			assert.Greater(t, cpu.Events()[EvIndexDelete], writer[EvIndexDelete], "the close truncated on the closing CPU")
		})
	}
}

// TestBufferedWriteEventsPerPage pins the simulated clock of the write path:
// the events per page of 1 MiB write(2)s plus SyncBlockdev in steady state
// (every page a new folio, reclaim freeing an old one: the setup of
// BenchmarkBufferedWrite). The metadata-only mode takes the same steps. A
// change that makes the path faster must leave these numbers exactly so.
// The bit operations a buffer, up to v4.17 (BitOpsBlind): set_buffer_mapped
// (blkdev_get_block), set_buffer_uptodate and clear_buffer_new
// (__block_commit_write), test_clear_buffer_dirty and
// mark_buffer_async_write (writeback), test_set_buffer_req (submit_bh),
// set_buffer_uptodate and clear_buffer_async_write (the completion): eight.
// From v4.18 (BitOpsTestSet) the completion's set_buffer_uptodate of a
// buffer already uptodate writes nothing: seven; from v5.12 (BitOpsTested)
// neither does the commit's clear_buffer_new of a buffer that is not new:
// six. One folio dirtied a page.
func TestBufferedWriteEventsPerPage(t *testing.T) {
	const common4K = "bh-allocs=1 bh-frees=1 ring-links=2 ring-walks=7 index-lookups=1 index-levels=1.984375 " +
		"index-inserts=1 index-deletes=1 private-locks=2 folio-gets=3 folio-puts=4 folio-allocs=1 folio-frees=1 " +
		"folio-locks=2 bh-locks=1 mark-dirty=1 bios=1 bio-completions=1 faultin-pages=1 bytes-copied=4096 " +
		"write-iters=1 get-blocks=1 writepages=1"
	const common512 = "bh-allocs=8 bh-frees=8 ring-links=9 ring-walks=56 index-lookups=1 index-levels=1.984375 " +
		"index-inserts=1 index-deletes=1 private-locks=2 folio-gets=3 folio-puts=4 folio-allocs=1 folio-frees=1 " +
		"folio-locks=2 bh-locks=8 mark-dirty=8 bios=8 bio-completions=8 faultin-pages=1 bytes-copied=4096 " +
		"write-iters=1 get-blocks=8 writepages=1"
	for _, tc := range []struct {
		bsize uint32
		bits  BitOps
		want  string
	}{
		{4096, BitOpsBlind, common4K + " bh-bitops=8 folio-dirties=1"},
		{512, BitOpsBlind, common512 + " bh-bitops=64 folio-dirties=1"},
		{4096, BitOpsTestSet, common4K + " bh-bitops=7 folio-dirties=1"},
		{512, BitOpsTestSet, common512 + " bh-bitops=56 folio-dirties=1"},
		{4096, BitOpsTested, common4K + " bh-bitops=6 folio-dirties=1"},
		{512, BitOpsTested, common512 + " bh-bitops=48 folio-dirties=1"},
	} {
		for _, data := range []bool{true, false} {
			t.Run(fmt.Sprintf("bsize=%d/%s/data=%v", tc.bsize, tc.bits, data), func(t *testing.T) {
				w := newWriteBenchBits(t, data, tc.bsize, tc.bits)
				for range 8 { // fill the page cache: from here on, reclaim runs
					w.writeSync(t)
				}
				before := w.cpu.Events()
				for range 4 {
					w.writeSync(t)
				}
				var perPage []string
				for e, n := range w.cpu.Events().Sub(before) {
					if n != 0 {
						perPage = append(perPage, fmt.Sprintf("%s=%g", Event(e), float64(n)/1024))
					}
				}
				assert.Equal(t, tc.want, strings.Join(perPage, " "))
			})
		}
	}
}

// TestReclaimSkipsALockedFolio: a writer that holds a dirty folio locked
// (write_begin's lock, as a get_block that allocates holds it) and creates a
// folio in a full page cache of dirty folios makes reclaim write back the
// others without waiting for the lock it holds itself, as the kernel's
// reclaim only ever trylocks — directly and through kswapd.
func TestReclaimSkipsALockedFolio(t *testing.T) {
	for _, kswapd := range []bool{false, true} {
		t.Run(fmt.Sprintf("kswapd=%v", kswapd), func(t *testing.T) {
			const limit = 8
			m, d, _ := newDev(t, Config{CPUs: 2, PageCacheLimit: limit, Kswapd: kswapd, KswapdCPU: 1, InitBlocksize: blocksize.PolicyLogical}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			n, err := d.Write(cpu, 0, userIter(t, make([]byte, limit*4096)))
			require.NoError(t, err)
			require.Equal(t, uint64(limit*4096), n)
			require.Equal(t, limit, d.NrDirty(), "a full cache of dirty folios (no dirty limit)")
			f := d.GetWriteFolio(cpu, 0, 4096) // dirty, now locked by us
			require.NotNil(t, f)
			require.NoError(t, d.BlockWriteBegin(cpu, f, 0, 4096, nil))
			// The allocation, on our behalf: we hold f meanwhile.
			requireReturns(t, 10*time.Second, "reclaim waited for the folio lock its allocating caller holds", func() error {
				bh, err := d.Bread(cpu, 1000, 512)
				if err == nil {
					Brelse(cpu, bh)
				}
				return err
			})
			assert.True(t, f.Has(FolioDirty), "the locked folio was skipped")
			assert.Equal(t, uint64(4096), d.WriteEnd(cpu, f, 0, 4096, 4096))
			require.NoError(t, m.Check())
		})
	}
}
