package bufcache

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// DeviceOptions are per-device choices made at open.
type DeviceOptions struct {
	// ReadOnly opens the device read-only (bdev_read_only).
	ReadOnly bool
	// MetadataOnly keeps no page data: folios and bios carry lengths only, so a
	// device of many TiB (block 4G and beyond) fits in little memory. Reads then
	// return buffers without data and the disk stores nothing.
	MetadataOnly bool
}

// BlockDevice models an opened struct block_device and its bd_inode: the size,
// the logical block size of the queue beneath, i_blkbits (the block size of the
// device's own page cache, set at first open by the machine's
// set_init_blocksize policy and by SetBlocksize) and the page-cache mapping.
type BlockDevice struct {
	m        *Machine
	disk     blk.Device
	size     uint64 // i_size in bytes
	logical  uint32
	blkbits  atomic.Uint32
	readOnly atomic.Bool
	metaOnly bool
	mapping  Mapping
	// wbErr counts write errors (the mapping's AS_EIO); wbErrSeen is the count
	// the last SyncBlockdev reported up to.
	wbErr, wbErrSeen atomic.Uint64
}

// Open models the first open of a block device (blkdev_get_whole with
// bd_openers == 0): it wraps disk, sets i_blkbits with the machine's
// set_init_blocksize policy and returns the device. Errors: the disk's logical
// block size is invalid for this PAGE_SIZE; ErrBadDevice for a nil disk, an
// empty one, or one larger than MAX_LFS_FILESIZE (i_size is a loff_t: the
// kernel's capacity arithmetic would wrap).
func (m *Machine) Open(disk blk.Device, opts DeviceOptions) (*BlockDevice, error) {
	if disk == nil {
		return nil, fmt.Errorf("%w: open of a nil disk", ErrBadDevice)
	}
	if v := reflect.ValueOf(disk); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("%w: open of a nil %T", ErrBadDevice, disk)
	}
	sectors := disk.Sectors()
	if sectors == 0 {
		return nil, fmt.Errorf("%w: open %s: empty device", ErrBadDevice, disk.Name())
	}
	if sectors > blocksize.MaxLFSFileSize>>blk.SectorShift {
		return nil, fmt.Errorf("%w: open %s: %d sectors is more than MAX_LFS_FILESIZE (%d bytes)",
			ErrBadDevice, disk.Name(), sectors, uint64(blocksize.MaxLFSFileSize))
	}
	size := sectors << blk.SectorShift
	bsize, err := m.cfg.Blocksize.InitBlocksize(size, disk.LogicalBlockSize(), m.cfg.PageSize)
	if err != nil {
		return nil, fmt.Errorf("bufcache: open %s: %w", disk.Name(), err)
	}
	d := &BlockDevice{m: m, disk: disk, size: size, logical: disk.LogicalBlockSize(), metaOnly: opts.MetadataOnly}
	d.blkbits.Store(uint32(blocksize.Log2(bsize)))
	d.readOnly.Store(opts.ReadOnly)
	d.mapping = Mapping{dev: d, index: pageindex.New[Folio](m.cfg.Index)}
	m.mu.Lock()
	m.devices = append(m.devices, d)
	m.mu.Unlock()
	return d, nil
}

// Name returns the disk's name.
func (d *BlockDevice) Name() string { return d.disk.Name() }

// Disk returns the queue beneath the device.
func (d *BlockDevice) Disk() blk.Device { return d.disk }

// Machine returns the machine the device was opened on.
func (d *BlockDevice) Machine() *Machine { return d.m }

// Size returns the device size in bytes (i_size).
func (d *BlockDevice) Size() uint64 { return d.size }

// LogicalBlockSize returns bdev_logical_block_size.
func (d *BlockDevice) LogicalBlockSize() uint32 { return d.logical }

// BlockSize returns block_size(bdev) = 1 << i_blkbits.
func (d *BlockDevice) BlockSize() uint32 { return 1 << d.blkbits.Load() }

// Geometry returns the page/block arithmetic for the current i_blkbits.
func (d *BlockDevice) Geometry() blocksize.Geometry {
	return blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(d.blkbits.Load())}
}

// ReadOnly reports bdev_read_only.
func (d *BlockDevice) ReadOnly() bool { return d.readOnly.Load() }

// SetReadOnly models set_disk_ro / BLKROSET. The flag is for the block-device
// write entry (blkdev_write_iter, with the write path); buffer-level I/O does not
// consult it, as in the kernel, where bio_check_ro only warns.
func (d *BlockDevice) SetReadOnly(ro bool) { d.readOnly.Store(ro) }

// MetadataOnly reports whether the device keeps no page data.
func (d *BlockDevice) MetadataOnly() bool { return d.metaOnly }

// NrPages returns the number of folios in the device's page cache (nrpages).
func (d *BlockDevice) NrPages() int { return d.mapping.index.Len() }

// IndexHeight returns the height of the page-cache index tree.
func (d *BlockDevice) IndexHeight() int { return d.mapping.index.Height() }

// SetBlocksize models set_blocksize (v5.x form): validate size, do nothing if it
// equals the current block size, else write back all dirty buffers
// (sync_blockdev), set i_blkbits and throw the whole page cache away (kill_bdev),
// which first empties every CPU's bh LRU. Errors: a *blocksize.SizeError for a
// size that is not a power of two, below 512, above PAGE_SIZE or below the
// logical block size (nothing changes). A write error during the sync is
// ignored, and consumed, as set_blocksize does.
func (d *BlockDevice) SetBlocksize(cpu *CPU, size uint32) error {
	if err := blocksize.ValidateBlocksize(size, d.logical, d.m.cfg.PageSize); err != nil {
		return err
	}
	bits := uint32(blocksize.Log2(size))
	if d.blkbits.Load() == bits {
		return nil
	}
	_ = d.SyncBlockdev(cpu)
	d.blkbits.Store(bits)
	d.killBdev(cpu)
	d.debugCheck()
	return nil
}

// killBdev models kill_bdev: if the mapping has pages, invalidate every CPU's
// bh LRU (invalidate_bh_lrus: an LRU entry pins its buffers) and then truncate
// the whole page cache, dirty or not.
func (d *BlockDevice) killBdev(cpu *CPU) {
	if d.mapping.index.Len() == 0 {
		return
	}
	d.m.InvalidateBhLRUs(cpu)
	d.truncate(cpu)
}

// truncate models truncate_inode_pages(mapping, 0) for the block device: every
// folio is locked and waited on if under writeback, its buffers discarded and, if nobody holds them, freed
// (block_invalidate_folio → try_to_free_buffers), and the folio is removed from
// the page cache. A folio whose buffers are still held leaves the cache with its
// ring attached; the holders' brelse make it collectable.
func (d *BlockDevice) truncate(cpu *CPU) {
	m := &d.mapping
	for start := uint64(0); ; {
		index, f, ok := m.index.Next(start)
		if !ok {
			return
		}
		if f.tryGet(cpu) {
			f.lockFolio(cpu)
			if f.mapping.Load() == m {
				waitOnWriteback(cpu, f)
				d.invalidateFolio(cpu, f)
				m.remove(cpu, f)
			}
			f.unlockFolio()
			f.put(cpu)
		}
		if index == ^uint64(0) {
			return
		}
		start = index + 1
	}
}

// invalidateFolio models block_invalidate_folio over the whole folio: discard
// every buffer (lock, clear Dirty, Mapped, Req, New, Delay, Unwritten and
// b_bdev, unlock),
// then try to free the ring. The folio is locked.
func (d *BlockDevice) invalidateFolio(cpu *CPU, f *Folio) {
	head := f.private
	if head == nil {
		return
	}
	for bh := range head.ring(cpu) {
		LockBuffer(cpu, bh)
		bh.state.Clear(BHDirty | BHMapped | BHReq | BHNew | BHDelay | BHUnwritten)
		bh.bdev.Store(nil) // discard_buffer: a stale LRU entry no longer matches
		UnlockBuffer(cpu, bh)
	}
	_ = d.tryToFreeBuffers(cpu, f) // busy buffers stay with the orphaned folio
}
