package bufcache

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// errAnyBadInput stands, in TestBadInput, for an error that wraps no sentinel.
var errAnyBadInput = errors.New("any error")

// describedDisk is a blk.Device that describes itself as told and completes
// every bio at once: what Open is given by a driver.
type describedDisk struct {
	sectors uint64
	logical uint32
}

func (f describedDisk) Name() string             { return "fake" }
func (f describedDisk) Sectors() uint64          { return f.sectors }
func (f describedDisk) LogicalBlockSize() uint32 { return f.logical }
func (f describedDisk) Submit(b *blk.Bio)        { b.Complete(nil) }

// badRig is TestBadInput's device: 1 MiB with 512-byte logical blocks (4096
// with logical4K), 4 KiB blocks, the invariant checker on.
type badRig struct {
	m   *Machine
	d   *BlockDevice
	cpu *CPU
}

// TestBadInput is the bad-input table of the package documentation, row by
// row: each class of bad input gets its error (errors.Is), the device keeps
// its block size and the invariants hold. (Pages a refused getblk created stay
// cached, as in the kernel.)
func TestBadInput(t *testing.T) {
	const size = 1 << 20
	newMachine := func(cfg Config) error { _, err := NewMachine(cfg); return err }
	open := func(r *badRig, disk blk.Device) error { _, err := r.m.Open(disk, DeviceOptions{}); return err }
	getblk := func(r *badRig, block uint64, size uint32) error {
		bh, err := r.d.Getblk(r.cpu, block, size)
		Brelse(r.cpu, bh)
		return err
	}
	bread := func(r *badRig, block uint64, size uint32) error {
		bh, err := r.d.Bread(r.cpu, block, size)
		Brelse(r.cpu, bh)
		return err
	}
	write := func(r *badRig, pos uint64, data []byte, unreadable uint64) error {
		u := NewUserBuf(data, 0, 4096)
		u.SetUnreadable(0, unreadable)
		it, err := u.Iter(0, uint64(len(data)))
		if err != nil {
			return err
		}
		n, err := r.d.Write(r.cpu, pos, it)
		if err != nil && n != 0 {
			return errors.New("wrote something and failed")
		}
		return err
	}
	tests := []struct {
		name      string
		logical4K bool
		call      func(r *badRig) error
		want      error
	}{
		{"NewMachine: negative CPU count", false, func(*badRig) error { return newMachine(Config{CPUs: -1}) }, errAnyBadInput},
		{"NewMachine: PAGE_SIZE not a power of two", false, func(*badRig) error { return newMachine(Config{PageSize: 8000}) }, blocksize.ErrBadPageSize},
		{"NewMachine: PAGE_SIZE above 64 KiB", false, func(*badRig) error { return newMachine(Config{PageSize: 1 << 17}) }, blocksize.ErrBadPageSize},
		{"NewMachine: PAGE_SIZE below 4 KiB", false, func(*badRig) error { return newMachine(Config{PageSize: 2048}) }, blocksize.ErrBadPageSize},
		{"NewMachine: unknown blocksize policy", false, func(*badRig) error { return newMachine(Config{InitBlocksize: 9}) }, blocksize.ErrUnknownPolicy},
		{"NewMachine: unknown alloc variant", false, func(*badRig) error { return newMachine(Config{Alloc: 9}) }, errAnyBadInput},
		{"NewMachine: unknown index kind", false, func(*badRig) error { return newMachine(Config{Index: 9}) }, pageindex.ErrUnknownKind},
		{"NewMachine: unknown LRU mode", false, func(*badRig) error { return newMachine(Config{LRU: 9}) }, errAnyBadInput},
		{"NewMachine: negative LRU size", false, func(*badRig) error { return newMachine(Config{LRUSize: -1}) }, errAnyBadInput},
		{"NewMachine: negative dirty limit", false, func(*badRig) error { return newMachine(Config{DirtyLimit: math.MinInt}) }, errAnyBadInput},
		{"NewMachine: negative page cache limit", false, func(*badRig) error { return newMachine(Config{PageCacheLimit: -1}) }, errAnyBadInput},
		{"NewMachine: flusher CPU out of range", false, func(*badRig) error {
			return newMachine(Config{CPUs: 2, SeparateFlusher: true, FlusherCPU: 2})
		}, errAnyBadInput},
		{"NewMachine: kswapd CPU out of range", false, func(*badRig) error {
			return newMachine(Config{CPUs: 2, Kswapd: true, KswapdCPU: 2})
		}, errAnyBadInput},
		{"NewMachine: kswapd on the flusher's CPU", false, func(*badRig) error {
			return newMachine(Config{CPUs: 3, SeparateFlusher: true, FlusherCPU: 1, Kswapd: true, KswapdCPU: 1})
		}, errAnyBadInput},
		{"NewMachine: more than MaxCPUs CPUs", false, func(*badRig) error { return newMachine(Config{CPUs: MaxCPUs + 1}) }, errAnyBadInput},
		{"NewMachine: 2^62 CPUs", false, func(*badRig) error { return newMachine(Config{CPUs: 1 << 62}) }, errAnyBadInput},
		{"NewMachine: more than MaxLRUSize slots", false, func(*badRig) error { return newMachine(Config{LRUSize: MaxLRUSize + 1}) }, errAnyBadInput},
		{"Open: nil disk", false, func(r *badRig) error { return open(r, nil) }, ErrBadDevice},
		{"Open: nil *blk.MemDisk", false, func(r *badRig) error { return open(r, (*blk.MemDisk)(nil)) }, ErrBadDevice},
		{"Open: empty disk", false, func(r *badRig) error { return open(r, describedDisk{0, 512}) }, ErrBadDevice},
		{"Open: a disk the machine already has", false, func(r *badRig) error { return open(r, r.d.disk) }, ErrBadDevice},
		{"AddDisk: a disk the machine already has", false, func(r *badRig) error { _, err := r.m.AddDisk(r.d.disk, DeviceOptions{}); return err }, ErrBadDevice},
		{"Open: two equal disks that are values", false, func(r *badRig) error {
			if _, err := r.m.Open(describedDisk{2048, 512}, DeviceOptions{}); err != nil {
				return err
			}
			_, err := r.m.Open(describedDisk{2048, 512}, DeviceOptions{}) // a value has no identity: two disks
			return err
		}, nil},
		{"Open: 2^64-1 sectors", false, func(r *badRig) error { return open(r, describedDisk{math.MaxUint64, 512}) }, ErrBadDevice},
		{"Open: logical block size 0", false, func(r *badRig) error { return open(r, describedDisk{8, 0}) }, blocksize.ErrNotPowerOfTwo},
		{"Open: logical block size 1000", false, func(r *badRig) error { return open(r, describedDisk{8, 1000}) }, blocksize.ErrNotPowerOfTwo},
		{"Open: logical block size above PAGE_SIZE", false, func(r *badRig) error { return open(r, describedDisk{64, 8192}) }, blocksize.ErrAbovePageSize},
		{"SetBlocksize: 0", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 0) }, blocksize.ErrNotPowerOfTwo},
		{"SetBlocksize: 1536", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 1536) }, blocksize.ErrNotPowerOfTwo},
		{"SetBlocksize: 2^32-1", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, math.MaxUint32) }, blocksize.ErrNotPowerOfTwo},
		{"SetBlocksize: 256", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 256) }, blocksize.ErrBelowMinimum},
		{"SetBlocksize: above PAGE_SIZE", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 8192) }, blocksize.ErrAbovePageSize},
		{"SetBlocksize: 2^31", false, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 1<<31) }, blocksize.ErrAbovePageSize},
		{"SetBlocksize: below the logical block size", true, func(r *badRig) error { return r.d.SetBlocksize(r.cpu, 1024) }, blocksize.ErrBelowLogical},
		{"Getblk: size 0", false, func(r *badRig) error { return getblk(r, 3, 0) }, ErrInvalidBlockSize},
		{"Getblk: size 1536", false, func(r *badRig) error { return getblk(r, 3, 1536) }, ErrInvalidBlockSize},
		{"Getblk: size 256", false, func(r *badRig) error { return getblk(r, 3, 256) }, ErrInvalidBlockSize},
		{"Getblk: size above PAGE_SIZE", false, func(r *badRig) error { return getblk(r, 3, 8192) }, ErrInvalidBlockSize},
		{"Bread: size 2^32-1", false, func(r *badRig) error { return bread(r, 3, math.MaxUint32) }, ErrInvalidBlockSize},
		{"Getblk: size 0, block cached", false, func(r *badRig) error {
			if err := getblk(r, 3, 4096); err != nil {
				return err
			}
			bh, err := r.d.Getblk(r.cpu, 3, 0) // the lookup comes first, as in the kernel
			if err != nil || bh.Size() != 4096 || bh.BlockNr() != 3 {
				return errors.New("not the cached buffer")
			}
			Brelse(r.cpu, bh)
			return nil
		}, nil},
		{"Getblk: size below the logical block size", true, func(r *badRig) error { return getblk(r, 3, 512) }, ErrInvalidBlockSize},
		{"Getblk: valid size other than the block size", false, func(r *badRig) error { return getblk(r, 3, 1024) }, ErrSizeMismatch},
		{"Getblk: page holds a referenced ring of another size", false, func(r *badRig) error {
			bh, err := r.d.Getblk(r.cpu, 0, 1024) // a 1024-byte ring on page 0, found by block 0
			if err != nil {
				return err
			}
			defer Brelse(r.cpu, bh)
			return getblk(r, 1, 2048) // page 0 again for 2048-byte blocks
		}, ErrBuffersBusy},
		{"Getblk: block at the device's end", false, func(r *badRig) error { return getblk(r, size/4096, 4096) }, ErrBeyondDevice},
		{"Bread: block 4G of a 1 MiB device", false, func(r *badRig) error { return bread(r, 1<<32, 4096) }, ErrBeyondDevice},
		{"Getblk: last block below MAX_LFS_FILESIZE", false, func(r *badRig) error { return getblk(r, math.MaxInt64>>12, 4096) }, ErrBeyondDevice},
		{"Getblk: first block past MAX_LFS_FILESIZE", false, func(r *badRig) error { return getblk(r, math.MaxInt64>>12+1, 4096) }, ErrOutOfRange},
		{"Bread: block 2^64-1", false, func(r *badRig) error { return bread(r, math.MaxUint64, 4096) }, ErrOutOfRange},
		{"FindGetBlock: block 2^64-1", false, func(r *badRig) error {
			if r.d.FindGetBlock(r.cpu, math.MaxUint64, 4096) != nil || r.d.FindGetBlockSlow(r.cpu, math.MaxUint64) != nil {
				return errors.New("found a buffer")
			}
			return nil
		}, nil},
		{"TryToFreeBuffers: page 2^64-1", false, func(r *badRig) error { return r.d.TryToFreeBuffers(r.cpu, math.MaxUint64) }, ErrNotCached},
		{"TryToFreeBuffers: page without buffers", false, func(r *badRig) error {
			if _, err := r.d.Read(r.cpu, 8192, make([]byte, 1)); err != nil { // readahead: no buffers
				return err
			}
			return r.d.TryToFreeBuffers(r.cpu, 2)
		}, ErrNoBuffers},
		{"TryToFreeBuffers: buffer held", false, func(r *badRig) error {
			bh, err := r.d.Getblk(r.cpu, 5, 4096)
			if err != nil {
				return err
			}
			defer Brelse(r.cpu, bh)
			return r.d.TryToFreeBuffers(r.cpu, 5)
		}, ErrBuffersBusy},
		{"Write: at the device's end", false, func(r *badRig) error { return write(r, size, []byte{1}, 0) }, ErrNoSpace},
		{"Write: at 2^64-1", false, func(r *badRig) error { return write(r, math.MaxUint64, []byte{1}, 0) }, ErrNoSpace},
		{"Write: read-only device", false, func(r *badRig) error {
			r.d.SetReadOnly(true)
			defer r.d.SetReadOnly(false)
			return write(r, 0, []byte{1}, 0)
		}, ErrReadOnly},
		{"Write: unreadable user buffer", false, func(r *badRig) error { return write(r, 0, make([]byte, 10), 1) }, ErrFault},
		{"Write: empty", false, func(r *badRig) error { return write(r, math.MaxUint64, nil, 0) }, nil},
		{"Write: a nil iterator", false, func(r *badRig) error {
			if n, err := r.d.Write(r.cpu, 0, nil); err != nil || n != 0 {
				return fmt.Errorf("wrote %d bytes: %w", n, err)
			}
			return nil
		}, nil},
		{"Write: crossing the end is shortened", false, func(r *badRig) error {
			it, err := NewUserBufSize(math.MaxUint64, 0, 4096).Iter(0, math.MaxUint64)
			if err != nil {
				return err
			}
			if n, err := r.d.Write(r.cpu, size-3, it); err != nil || n != 3 || it.Count() != math.MaxUint64-3 {
				return errors.New("not shortened to the end")
			}
			return nil
		}, nil},
		{"Read: at 2^64-1", false, func(r *badRig) error {
			if n, err := r.d.Read(r.cpu, math.MaxUint64, make([]byte, 10)); err != nil || n != 0 {
				return errors.New("read past the end")
			}
			return nil
		}, nil},
		{"UserBuf.Iter: offset past the end", false, func(*badRig) error {
			_, err := NewUserBuf(make([]byte, 10), 0, 4096).Iter(11, 0)
			return err
		}, errAnyBadInput},
		{"UserBuf.Iter: length wrapping 2^64", false, func(*badRig) error {
			_, err := NewUserBuf(make([]byte, 10), 0, 4096).Iter(5, math.MaxUint64)
			return err
		}, errAnyBadInput},
		{"UserBuf.Iter: a buffer passing 2^64", false, func(*badRig) error {
			_, err := NewUserBuf(make([]byte, 200), math.MaxUint64-100, 4096).Iter(0, 10)
			return err
		}, errAnyBadInput},
		{"UserBuf.Iter: page size 0", false, func(*badRig) error {
			_, err := NewUserBuf(make([]byte, 10), 0, 0).Iter(0, 10)
			return err
		}, blocksize.ErrBadPageSize},
		{"UserBuf.Iter: page size 2^31", false, func(*badRig) error {
			_, err := NewUserBufSize(10, 0, 1<<31).Iter(0, 10)
			return err
		}, blocksize.ErrBadPageSize},
		{"BlockWriteBegin: empty range", false, func(r *badRig) error {
			return r.d.BlockWriteBegin(r.cpu, r.d.GetWriteFolio(r.cpu, 4096, 0), 4096, 0, nil)
		}, ErrBadRange},
		{"BlockWriteBegin: range leaving the folio", false, func(r *badRig) error {
			return r.d.BlockWriteBegin(r.cpu, r.d.GetWriteFolio(r.cpu, 4096, 200), 8000, 200, nil)
		}, ErrBadRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logical := uint32(512)
			if tt.logical4K {
				logical = 4096
			}
			m, d, _ := newDev(t, Config{Check: true}, size, logical, DeviceOptions{})
			r := &badRig{m: m, d: d, cpu: m.CPU(0)}
			require.Equal(t, uint32(4096), d.BlockSize())
			err := tt.call(r)
			switch tt.want {
			case nil:
				assert.NoError(t, err)
			case errAnyBadInput:
				assert.Error(t, err)
			default:
				assert.ErrorIs(t, err, tt.want)
			}
			assert.Equal(t, uint32(4096), d.BlockSize(), "the block size changed")
			assert.NoError(t, m.Check())
		})
	}
}

// TestBadInputWarnings: the caller errors the kernel only warns about are
// counted as EvWarning and change nothing else.
func TestBadInputWarnings(t *testing.T) {
	tests := []struct {
		name string
		call func(cpu *CPU, bh *BufferHead)
		want BHState // bh's state afterwards
	}{
		{"brelse of a free buffer", func(cpu *CPU, bh *BufferHead) { Brelse(cpu, bh) }, BHMapped},
		{"unlock of an unlocked buffer", func(cpu *CPU, bh *BufferHead) { UnlockBuffer(cpu, bh) }, BHMapped},
		{"mark_buffer_dirty of a buffer not uptodate", func(cpu *CPU, bh *BufferHead) {
			bh.get(cpu)
			MarkBufferDirty(cpu, bh)
			Brelse(cpu, bh)
		}, BHMapped | BHDirty},
		{"mark_buffer_dirty of a nil buffer", func(cpu *CPU, _ *BufferHead) { MarkBufferDirty(cpu, nil) }, BHMapped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, d, _ := newDev(t, Config{LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			bh, err := d.Getblk(cpu, 1, 4096)
			require.NoError(t, err)
			Brelse(cpu, bh)
			require.Zero(t, bh.Count())
			before := cpu.Events()[EvWarning]
			tt.call(cpu, bh)
			assert.Equal(t, before+1, cpu.Events()[EvWarning])
			assert.Zero(t, bh.Count())
			assert.Equal(t, tt.want, bh.State())
			assert.NoError(t, m.Check())
		})
	}
}

// TestOpenTooLarge: a driver describing a disk past MAX_LFS_FILESIZE (the
// block device's i_size is a loff_t) is refused: unchecked, 2^55+1 sectors
// would wrap to a 512-byte device and 2^60 to an empty one, and a device
// between 2^63 and 2^64 bytes would take writes whose buffers getblk then
// calls out of range. The largest admissible disk opens.
func TestOpenTooLarge(t *testing.T) {
	limit := uint64(blocksize.MaxLFSFileSize) >> blk.SectorShift
	for _, tt := range []struct {
		sectors uint64
		ok      bool
	}{
		{limit, true},
		{limit + 1, false},
		{1<<55 + 1, false},
		{1 << 60, false},
		{math.MaxUint64, false},
	} {
		m, err := NewMachine(Config{})
		require.NoError(t, err)
		d, err := m.Open(describedDisk{tt.sectors, 512}, DeviceOptions{MetadataOnly: true})
		if tt.ok {
			require.NoError(t, err, "%d sectors", tt.sectors)
			assert.Equal(t, tt.sectors<<blk.SectorShift, d.Size())
			continue
		}
		assert.ErrorIs(t, err, ErrBadDevice, "%d sectors", tt.sectors)
	}
}

// TestOpenNil: a nil disk is a caller error, not a crash.
func TestOpenNil(t *testing.T) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	_, err = m.Open(nil, DeviceOptions{})
	assert.ErrorIs(t, err, ErrBadDevice)
}

// TestNewMachineHugeCounts: a CPU count or an LRU size no kernel has is
// refused, not left to crash the process (a makeslice panic, or an
// out-of-memory abort for counts that fit an allocation request); the
// largest admissible ones are accepted.
func TestNewMachineHugeCounts(t *testing.T) {
	for _, tt := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{CPUs: 1 << 62}, false},
		{Config{CPUs: 1 << 40}, false},
		{Config{CPUs: MaxCPUs + 1}, false},
		{Config{LRUSize: 1 << 40}, false},
		{Config{LRUSize: MaxLRUSize + 1}, false},
		{Config{CPUs: MaxCPUs, LRUSize: MaxLRUSize}, true},
	} {
		_, err := NewMachine(tt.cfg)
		if tt.ok {
			assert.NoError(t, err, "%+v", tt.cfg)
		} else {
			assert.Error(t, err, "%+v", tt.cfg)
		}
	}
}

// TestGetblkBusyForeignRing: getblk with a valid size other than the block
// size returns ErrSizeMismatch but leaves the ring it grew, of that size, in
// the page cache. Once a write(2) has dirtied it, getblk with the right size
// on that page can free the ring only after it is written back: the kernel
// loops until the flusher has done so, the model writes the device back
// itself, as the flusher would: skipping a buffer the caller holds locked
// (waiting for it would deadlock). The getblk must return the block, and the
// write must be on the media.
func TestGetblkBusyForeignRing(t *testing.T) {
	m, d, disk := newDev(t, Config{}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.Equal(t, uint32(4096), d.BlockSize())
	held, err := d.Getblk(cpu, 10, 4096) // the caller's own buffer, locked and dirty
	require.NoError(t, err)
	LockBuffer(cpu, held)
	held.state.Set(BHUptodate)
	MarkBufferDirty(cpu, held)
	_, err = d.Getblk(cpu, 4, 1024) // grows a 1024-byte ring on page 1
	require.ErrorIs(t, err, ErrSizeMismatch)
	it, err := NewUserBuf([]byte{0x5a}, 0, 4096).Iter(0, 1)
	require.NoError(t, err)
	_, err = d.Write(cpu, 4096, it) // dirties that ring
	require.NoError(t, err)
	requireReturns(t, 5*time.Second, "getblk(1, 4096) loops", func() error {
		bh, err := d.Getblk(m.CPU(0), 1, 4096)
		if err == nil {
			assert.Equal(t, uint32(4096), bh.Size())
			assert.Equal(t, byte(0x5a), bh.Data()[0])
			Brelse(m.CPU(0), bh)
		}
		return err
	})
	got := make([]byte, 1)
	_, err = disk.ReadAt(got, 4096)
	require.NoError(t, err)
	assert.Equal(t, byte(0x5a), got[0], "the dirty ring was not written before it was freed")
	assert.True(t, held.Has(BHDirty), "the caller's locked buffer was written under its lock")
	UnlockBuffer(cpu, held)
	Brelse(cpu, held)
	require.NoError(t, d.SyncBlockdev(cpu))
	require.NoError(t, d.Check())
}
