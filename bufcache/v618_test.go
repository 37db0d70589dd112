package bufcache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// traceCount is a Tracer that counts events by kind.
type traceCount struct{ n [NumTraceKinds]int }

func (c *traceCount) Trace(ev TraceEvent) { c.n[ev.Kind]++ }

func TestLinux618ConfigChecks(t *testing.T) {
	m, err := NewMachine(Linux618(Config{}))
	require.NoError(t, err)
	c := m.Config()
	assert.Equal(t, FoliosLarge, c.Folios)
	assert.Equal(t, blocksize.RulesLarge, c.SetBlocksize)
	assert.Equal(t, LookupNonatomic, c.Lookup)
	assert.Equal(t, BitOpsTested, c.BitOps)
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"large rules without large folios", Config{SetBlocksize: blocksize.RulesLarge}, nil},
		{"unknown rules", Config{SetBlocksize: blocksize.Rules(7)}, blocksize.ErrUnknownRules},
		{"unknown folios", Config{Folios: FolioPolicy(7)}, nil},
		{"unknown lookup", Config{Lookup: LookupVariant(7)}, nil},
		{"unknown bit operations", Config{BitOps: BitOps(7)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMachine(tc.cfg)
			if assert.Error(t, err) && tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
		})
	}
	assert.Equal(t, "large", FoliosLarge.String())
	assert.Equal(t, "nonatomic", LookupNonatomic.String())
	assert.Equal(t, "tested", BitOpsTested.String())
	assert.Equal(t, uint8(9), maxPagecacheOrder(12), "2 MiB folios on 4 KiB pages")
	assert.Equal(t, uint8(11), maxPagecacheOrder(16), "capped by MAX_XAS_ORDER on 64 KiB pages")
}

// TestErrseq pins errseq_t's rules: an error nobody saw is recorded once
// and every sampler sees it; once seen, the next error moves the counter;
// a sample taken after the error was seen does not see it.
func TestErrseq(t *testing.T) {
	var e errseq
	a, b := e.sample(), e.sample()
	errno, moved := e.checkAndAdvance(&a)
	assert.Zero(t, errno)
	assert.False(t, moved, "no error yet")
	e.set(uint32(EIO))
	c := e.sample() // unseen: samples 0, so c will see it
	assert.Zero(t, c)
	for _, since := range []*uint32{&a, &b, &c} {
		errno, moved = e.checkAndAdvance(since)
		assert.Equal(t, uint32(EIO), errno)
		assert.True(t, moved)
		errno, moved = e.checkAndAdvance(since)
		assert.Zero(t, errno, "reported once")
		assert.False(t, moved)
	}
	late := e.sample() // seen: a new file does not see it
	errno, _ = e.checkAndAdvance(&late)
	assert.Zero(t, errno)
	before := e.v.Load()
	e.set(uint32(EIO))
	assert.NotEqual(t, before&^errseqSeen, e.v.Load(), "an error after a seen one moves the counter")
	errno, _ = e.checkAndAdvance(&late)
	assert.Equal(t, uint32(EIO), errno)
	e.set(uint32(ENOSPC))
	e.set(uint32(EIO)) // unseen yet: replaced, not counted twice
	errno, _ = e.checkAndAdvance(&a)
	assert.Equal(t, uint32(EIO), errno)
}

func TestErrnoOf(t *testing.T) {
	size := blocksize.RulesLarge.Validate(131072, 512, 4096)
	require.Error(t, size)
	for _, tc := range []struct {
		err  error
		want Errno
	}{
		{nil, 0},
		{fmt.Errorf("x: %w", ErrReadOnly), EPERM},
		{ErrNoSpace, ENOSPC},
		{ErrFault, EFAULT},
		{ErrBusy, EBUSY},
		{ErrBadFile, EBADF},
		{ErrInvalid, EINVAL},
		{size, EINVAL},
		{ErrInvalidBlockSize, EINVAL},
		{ErrBeyondDevice, ENXIO},
		{fmt.Errorf("%w: %w", ErrIO, blk.ErrNoSpace), EIO},
		{errors.New("anything else"), EIO},
		{fmt.Errorf("wrapped %w", EBUSY), EBUSY},
	} {
		assert.Equal(t, tc.want, ErrnoOf(tc.err), "%v", tc.err)
	}
	assert.Equal(t, "EINVAL", EINVAL.String())
	assert.Equal(t, "errno(99)", Errno(99).String())
	assert.Equal(t, "input/output error", EIO.Error())
}

// newDev618 opens a 1 MiB MemDisk on a one-CPU 6.18 machine with the
// invariant checker on, without an opener.
func newDev618(t *testing.T, cfg Config) (*Machine, *BlockDevice, *blk.MemDisk) {
	t.Helper()
	m, err := NewMachine(Linux618(cfg))
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("loop0", 1<<20, 512)
	require.NoError(t, err)
	d, err := m.AddDisk(disk, DeviceOptions{})
	require.NoError(t, err)
	return m, d, disk
}

// TestFileMisuse: operations through a closed File, a pwrite through a file
// opened for reading and a pread through one opened for writing fail with
// EBADF; bad open flags with EINVAL; an exclusive open while another file
// holds the device with EBUSY.
func TestFileMisuse(t *testing.T) {
	m, d, _ := newDev618(t, Config{Check: true})
	cpu := m.CPU(0)
	ro, err := d.Open(cpu, ORdOnly)
	require.NoError(t, err)
	wo, err := d.Open(cpu, OWrOnly|OpenExcl)
	require.NoError(t, err)
	it, err := NewUserBufSize(4096, 0, 4096).Iter(0, 4096)
	require.NoError(t, err)
	_, err = ro.Pwrite(cpu, 0, it)
	assert.Equal(t, EBADF, ErrnoOf(err))
	_, err = wo.Pread(cpu, 0, make([]byte, 10))
	assert.Equal(t, EBADF, ErrnoOf(err))
	_, err = d.Open(cpu, ORdOnly|OpenExcl)
	assert.Equal(t, EBUSY, ErrnoOf(err))
	_, err = d.Open(cpu, OpenExcl)
	assert.Equal(t, EINVAL, ErrnoOf(err))
	assert.Equal(t, EBUSY, ErrnoOf(ro.SetBlocksize(cpu, 8192)), "another file holds it")
	assert.Equal(t, EINVAL, ErrnoOf(wo.SetBlocksize(cpu, -1)))
	require.NoError(t, wo.SetBlocksize(cpu, 8192), "the holder may")
	assert.Equal(t, uint32(8192), ro.BlockSize())
	assert.Equal(t, 2, d.Openers())
	require.NoError(t, wo.Close(cpu))
	assert.Equal(t, EBADF, ErrnoOf(wo.Close(cpu)))
	assert.Equal(t, EBADF, ErrnoOf(wo.Fsync(cpu)))
	assert.Equal(t, EBADF, ErrnoOf(wo.FlushBuffers(cpu)))
	assert.Equal(t, EBADF, ErrnoOf(wo.SetReadOnly(cpu, true)))
	require.NoError(t, ro.SetBlocksize(cpu, 16384), "nobody holds it any more")
	require.NoError(t, ro.Close(cpu))
	assert.Zero(t, d.Openers())
	f, err := d.Open(cpu, ORdWr)
	require.NoError(t, err)
	assert.Equal(t, uint32(4096), f.BlockSize(), "set_init_blocksize again after the last close")
	assert.Equal(t, "read|write", f.Flags().String())
	require.NoError(t, f.Close(cpu))
}

// TestOpenKeepsOldAPI: a device from Machine.Open has an opener that never
// closes, so closing every File leaves its cache and block size alone.
func TestOpenKeepsOldAPI(t *testing.T) {
	m, d, _ := newDev(t, Linux618(Config{}), 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	f, err := d.Open(cpu, ORdWr)
	require.NoError(t, err)
	require.NoError(t, f.SetBlocksize(cpu, 1024))
	bh, err := d.Bread(cpu, 3, 1024)
	require.NoError(t, err)
	Brelse(cpu, bh)
	require.NoError(t, f.Close(cpu))
	assert.Equal(t, 1, d.Openers())
	assert.Equal(t, uint32(1024), d.BlockSize())
	assert.NotZero(t, d.NrPages())
}

// TestLookupVariantEvents: the v6.16 sleeping lookup serialises on the folio
// lock instead of private_lock, and Getblk uses it only under
// LookupNonatomic; FindGetBlock stays atomic.
func TestLookupVariantEvents(t *testing.T) {
	for _, tc := range []struct {
		lookup     LookupVariant
		call       string
		locks, pls uint64 // folio locks, private_lock acquisitions of one cached lookup
	}{
		{LookupAtomic, "getblk", 0, 1},
		{LookupNonatomic, "getblk", 1, 0},
		{LookupAtomic, "nonatomic", 1, 0},
		{LookupNonatomic, "find", 0, 1},
		{LookupNonatomic, "slow-nonatomic", 1, 0},
		{LookupAtomic, "slow", 0, 1},
	} {
		t.Run(fmt.Sprintf("%v/%s", tc.lookup, tc.call), func(t *testing.T) {
			m, d, _ := newDev(t, Config{Lookup: tc.lookup, LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			bh, err := d.Getblk(cpu, 5, 4096)
			require.NoError(t, err)
			Brelse(cpu, bh)
			before := cpu.Events()
			switch tc.call {
			case "getblk":
				bh, err = d.Getblk(cpu, 5, 4096)
				require.NoError(t, err)
			case "nonatomic":
				bh = d.FindGetBlockNonatomic(cpu, 5, 4096)
			case "find":
				bh = d.FindGetBlock(cpu, 5, 4096)
			case "slow-nonatomic":
				bh = d.FindGetBlockSlowNonatomic(cpu, 5)
			default:
				bh = d.FindGetBlockSlow(cpu, 5)
			}
			require.NotNil(t, bh)
			ev := cpu.Events().Sub(before)
			Brelse(cpu, bh)
			assert.Equal(t, tc.locks, ev[EvFolioLock])
			assert.Equal(t, tc.pls, ev[EvPrivateLock])
			assert.Equal(t, uint64(1), ev[EvIndexLookup])
			assert.Equal(t, uint64(1), ev[EvFolioGet], "the lookup's folio reference")
			assert.Equal(t, uint64(1), ev[EvBHGet], "the buffer's")
		})
	}
}

// TestGetWriteFolioOrder pins the folio iomap's write asks for on a 6.18
// mapping (fgf_set_order of the write's length, capped and aligned), and
// that a mapping without large folios stays at order 0.
func TestGetWriteFolioOrder(t *testing.T) {
	for _, tc := range []struct {
		folios FolioPolicy
		bsize  uint32
		pos, n uint64
		order  uint8
		index  uint64
	}{
		{FoliosLarge, 4096, 0, 1 << 20, 8, 0},
		{FoliosLarge, 4096, 0, 64 << 10, 4, 0},
		{FoliosLarge, 4096, 0, 16 << 10, 2, 0},
		{FoliosLarge, 4096, 0, 12 << 10, 1, 0},
		{FoliosLarge, 4096, 0, 4096, 0, 0},
		{FoliosLarge, 4096, 4096, 64 << 10, 0, 1},    // index 1: not aligned for more
		{FoliosLarge, 4096, 8 << 10, 64 << 10, 1, 2}, // index 2: order 1
		{FoliosLarge, 4096, 0, 4 << 20, 9, 0},        // capped at MAX_PAGECACHE_ORDER
		{FoliosLarge, 16384, 4096, 4096, 2, 0},       // the minimum order, aligned down
		{FoliosLarge, 65536, 100 << 10, 4096, 4, 16}, // 64 KiB blocks: order 4
		{FoliosSmall, 4096, 0, 1 << 20, 0, 0},
	} {
		t.Run(fmt.Sprintf("%v/bs=%d/pos=%d/n=%d", tc.folios, tc.bsize, tc.pos, tc.n), func(t *testing.T) {
			cfg := Config{Folios: tc.folios, Check: true}
			if tc.folios == FoliosLarge {
				cfg.SetBlocksize = blocksize.RulesLarge
			}
			m, d, _ := newDev(t, cfg, 8<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			require.NoError(t, d.SetBlocksize(cpu, tc.bsize))
			f := d.GetWriteFolio(cpu, tc.pos, tc.n)
			assert.Equal(t, tc.order, f.Order())
			assert.Equal(t, tc.index, f.Index())
			assert.True(t, f.covers(tc.pos>>12))
			f.unlockFolio()
			f.put(cpu)
			assert.Equal(t, 1<<tc.order, d.NrPages())
			require.NoError(t, d.Check())
		})
	}
}

// TestWriteFolioFallsBackToSmallerOrders: a write whose range is partly
// cached gets the largest folio that fits before the cached page, as
// __filemap_get_folio's loop does on -EEXIST.
func TestWriteFolioFallsBackToSmallerOrders(t *testing.T) {
	m, d, _ := newDev618(t, Config{Check: true})
	cpu := m.CPU(0)
	f := d.GetWriteFolio(cpu, 6<<12, 4096) // page 6 cached
	f.unlockFolio()
	f.put(cpu)
	g := d.GetWriteFolio(cpu, 0, 64<<10) // wants order 4 at 0: 0..15 overlaps page 6
	assert.Equal(t, uint8(2), g.Order(), "orders 4 and 3 collide with page 6, order 2 fits")
	g.unlockFolio()
	g.put(cpu)
}

// TestGetblkInLargeFolio: a block inside a large folio a write created gets
// a buffer of that folio's ring (folio_size/blocksize buffers numbered from
// folio_pos), and writeback writes one bio per dirty buffer.
func TestGetblkInLargeFolio(t *testing.T) {
	m, d, disk := newDev618(t, Config{Check: true})
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, 1024))
	f := d.GetWriteFolio(cpu, 64<<10, 64<<10) // order 4 at page 16
	require.Equal(t, uint8(4), f.Order())
	require.NoError(t, d.BlockWriteBegin(cpu, f, 64<<10, 64<<10, nil))
	assert.Equal(t, d.WriteEnd(cpu, f, 64<<10, 64<<10, 64<<10), uint64(64<<10))
	bh, err := d.Getblk(cpu, 64+37, 1024)
	require.NoError(t, err)
	assert.Same(t, f, bh.Folio())
	assert.Equal(t, uint32(37*1024), bh.Offset())
	n := 0
	for range bh.Folio().Buffers().ring(nil) {
		n++
	}
	assert.Equal(t, 64, n)
	Brelse(cpu, bh)
	before := cpu.Events()
	require.NoError(t, d.SyncBlockdev(cpu))
	assert.Equal(t, uint64(64), cpu.Events().Sub(before)[EvBioSubmit], "one bio per dirty 1 KiB buffer")
	assert.Equal(t, uint64(64), disk.Stats().Writes)
}

// TestTracerAllocatesNothing: tracing a write and its writeback with a
// tracer set allocates nothing the untraced path does not.
func TestTracerAllocatesNothing(t *testing.T) {
	m, d, _ := newDev618(t, Config{})
	var c traceCount
	m.SetTracer(&c)
	cpu := m.CPU(0)
	f, err := d.Open(cpu, ORdWr)
	require.NoError(t, err)
	buf := NewUserBufSize(16<<10, 0, 4096)
	write := func() {
		it, _ := buf.Iter(0, 16<<10)
		_, _ = f.Pwrite(cpu, 0, it)
		_ = f.Fsync(cpu)
	}
	write()
	assert.Zero(t, testing.AllocsPerRun(100, write)-allocsUntraced(t), "tracing allocates")
	assert.NotZero(t, c.n[TraceBufferDirty])
	assert.NotZero(t, c.n[TraceFolioDirty])
	d.SetTracer(nil)
	m.SetTracer(nil)
}

// allocsUntraced is the allocations of TestTracerAllocatesNothing's write
// without a tracer.
func allocsUntraced(t *testing.T) float64 {
	m, d, _ := newDev618(t, Config{})
	cpu := m.CPU(0)
	f, err := d.Open(cpu, ORdWr)
	require.NoError(t, err)
	buf := NewUserBufSize(16<<10, 0, 4096)
	write := func() {
		it, _ := buf.Iter(0, 16<<10)
		_, _ = f.Pwrite(cpu, 0, it)
		_ = f.Fsync(cpu)
	}
	write()
	return testing.AllocsPerRun(100, write)
}

func TestTraceKindNames(t *testing.T) {
	assert.Equal(t, "mm_filemap_add_to_page_cache", TraceFolioAdd.String())
	assert.Equal(t, "file_check_and_advance_wb_err", TraceWBErrReport.String())
	assert.Equal(t, "trace(99)", TraceKind(99).String())
}

// TestReadaheadWindows pins get_init_ra_size and get_next_ra_size at
// read_ahead_kb 128 (32 pages): the host's 4, 8 and 32 pages for cold reads
// of 1, 4 and 16 pages and the stream's growth.
func TestReadaheadWindows(t *testing.T) {
	for _, tc := range []struct{ req, want uint64 }{{1, 4}, {2, 4}, {4, 8}, {8, 16}, {9, 32}, {16, 32}, {256, 32}} {
		assert.Equal(t, tc.want, initRASize(tc.req, 32), "init(%d)", tc.req)
	}
	assert.Equal(t, uint64(256), initRASize(256, 256), "a 1 MiB read: max_pages from io_pages")
	for _, tc := range []struct{ cur, want uint64 }{{1, 4}, {4, 8}, {8, 16}, {16, 32}, {32, 32}} {
		assert.Equal(t, tc.want, nextRASize(tc.cur, 32), "next(%d)", tc.cur)
	}
}

// TestFileOpenReleaseEvents: an open of the device counts file-opens, even
// one refused because another file holds it, its last fput file-releases;
// BLKBSZSET on a file opened without O_EXCL opens and releases one more (the
// exclusive claim), also when the claim or the size is refused; an
// exclusive file sets the size without one; calls the model refuses before
// any kernel work (bad flags, a closed file) count nothing.
func TestFileOpenReleaseEvents(t *testing.T) {
	type step func(t *testing.T, cpu *CPU, d *BlockDevice, plain, excl *File)
	for _, tc := range []struct {
		name          string
		holder        bool // excl is open
		do            step
		opens, closes uint64
	}{
		{"open", false, func(t *testing.T, cpu *CPU, d *BlockDevice, _, _ *File) {
			_, err := d.Open(cpu, ORdOnly)
			require.NoError(t, err)
		}, 1, 0},
		{"close", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			require.NoError(t, plain.Close(cpu))
		}, 0, 1},
		{"close twice", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			require.NoError(t, plain.Close(cpu))
			require.Error(t, plain.Close(cpu))
		}, 0, 1},
		{"BLKBSZSET", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			require.NoError(t, plain.SetBlocksize(cpu, 1024))
		}, 1, 1},
		{"BLKBSZSET refused size", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			require.Error(t, plain.SetBlocksize(cpu, 3000))
		}, 1, 1},
		{"BLKBSZSET negative size", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			assert.Equal(t, EINVAL, ErrnoOf(plain.SetBlocksize(cpu, -1)))
		}, 1, 1},
		{"BLKBSZSET busy", true, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			assert.Equal(t, EBUSY, ErrnoOf(plain.SetBlocksize(cpu, 1024)))
		}, 1, 1},
		{"BLKBSZSET on a closed file", false, func(t *testing.T, cpu *CPU, _ *BlockDevice, plain, _ *File) {
			require.NoError(t, plain.Close(cpu))
			before := cpu.Events()
			assert.Equal(t, EBADF, ErrnoOf(plain.SetBlocksize(cpu, 1024)))
			assert.Equal(t, before, cpu.Events())
		}, 0, 1},
		{"open with bad flags", false, func(t *testing.T, cpu *CPU, d *BlockDevice, _, _ *File) {
			_, err := d.Open(cpu, OpenExcl)
			assert.Equal(t, EINVAL, ErrnoOf(err))
		}, 0, 0},
		{"BLKBSZSET by the holder", true, func(t *testing.T, cpu *CPU, _ *BlockDevice, _, excl *File) {
			require.NoError(t, excl.SetBlocksize(cpu, 1024))
		}, 0, 0},
		{"open refused", true, func(t *testing.T, cpu *CPU, d *BlockDevice, _, _ *File) {
			_, err := d.Open(cpu, ORdOnly|OpenExcl)
			assert.Equal(t, EBUSY, ErrnoOf(err))
		}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev618(t, Config{Check: true})
			cpu := m.CPU(0)
			plain, err := d.Open(cpu, ORdWr)
			require.NoError(t, err)
			var excl *File
			if tc.holder {
				excl, err = d.Open(cpu, ORdWr|OpenExcl)
				require.NoError(t, err)
			}
			before := cpu.Events()
			tc.do(t, cpu, d, plain, excl)
			ev := cpu.Events().Sub(before)
			assert.Equal(t, tc.opens, ev[EvFileOpen], "file-opens")
			assert.Equal(t, tc.closes, ev[EvFileRelease], "file-releases")
		})
	}
}
