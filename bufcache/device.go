package bufcache

import (
	"fmt"
	"reflect"
	"sync"
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
	// ReadAheadKB is the queue's read_ahead_kb, the readahead window's
	// maximum (ra_pages). 0 means the queue's default: twice the device's
	// optimal I/O size and at least 128 KiB (VM_READAHEAD_PAGES), which is
	// 128 KiB for a disk and two stripes for an md array — and, on a v6.18
	// queue, twice max_sectors for a rotational disk (blk_apply_bdi_limits).
	ReadAheadKB uint32
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
	// the last SyncBlockdev, or the last File's fsync, reported up to.
	wbErr, wbErrSeen atomic.Uint64
	// tracer is where the device's page-cache events go: ownTracer
	// (SetTracer) or the machine's, kept current by both SetTracers.
	tracer    tracerSlot
	ownTracer Tracer
	// ra is the readahead state of reads made without a File (Read), as if
	// through one file opened with the device; raMu guards it.
	ra   raState
	raMu sync.Mutex
	// raPages and ioPages are the bdi's ra_pages (read_ahead_kb) and io_pages
	// (max_sectors), in pages.
	raPages, ioPages uint64
	// opens counts and serialises the openers (File).
	opens openers
	// ownPlug: the disk is a v6.18 request queue, whose submit_bio plugs a
	// bio submitted outside a plug (submitBio).
	ownPlug bool
}

// mappingSetError models mapping_set_error(mapping, -EIO) for a writeback
// failure: AS_EIO (SyncBlockdev's report) and the mapping's errseq (every
// File's), traced as filemap_set_wb_err.
func (d *BlockDevice) mappingSetError(cpu *CPU) {
	d.wbErr.Add(1)
	d.mapping.wbErr.set(uint32(EIO))
	if t := d.tracing(); t != nil {
		d.emit(t, cpu, TraceEvent{Kind: TraceWBErrSet, Err: ErrIO})
	}
}

// Open models the first open of a block device (blkdev_get_whole with
// bd_openers == 0) by a holder that never closes it, as a mounted file system
// holds its device: it wraps disk, sets i_blkbits with the machine's
// set_init_blocksize policy and returns the device, with one opener. Open it
// again, or close what was opened, with BlockDevice.Open and File.Close.
// Errors: the disk's logical block size is invalid for this PAGE_SIZE;
// ErrBadDevice for a nil disk, an empty one, one larger than
// MAX_LFS_FILESIZE (i_size is a loff_t: the kernel's capacity arithmetic
// would wrap), or one this machine already has (the same pointer: a disk
// has one block device and one page cache; the same disk on two machines
// is two hosts sharing it, each with a cache of its own, which nothing
// keeps coherent).
func (m *Machine) Open(disk blk.Device, opts DeviceOptions) (*BlockDevice, error) {
	d, err := m.AddDisk(disk, opts)
	if err != nil {
		return nil, err
	}
	d.opens.n = 1
	return d, nil
}

// AddDisk models add_disk: the block device of disk exists, with its inode
// and an empty page cache, and nobody has it open. Its block size is the one
// set_init_blocksize would choose; the first BlockDevice.Open sets it again.
// Errors: those of Open.
func (m *Machine) AddDisk(disk blk.Device, opts DeviceOptions) (*BlockDevice, error) {
	if disk == nil {
		return nil, fmt.Errorf("%w: open of a nil disk", ErrBadDevice)
	}
	if v := reflect.ValueOf(disk); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("%w: open of a nil %T", ErrBadDevice, disk)
	}
	m.mu.Lock()
	dup := m.hasDiskLocked(disk)
	m.mu.Unlock()
	if dup { // before the set-up below confines the disk or reads its limits
		return nil, errDiskAdded(disk)
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
	if _, err := m.cfg.InitBlocksize.InitBlocksize(size, disk.LogicalBlockSize(), m.cfg.PageSize); err != nil {
		return nil, fmt.Errorf("bufcache: open %s: %w", disk.Name(), err)
	}
	d := &BlockDevice{m: m, disk: disk, size: size, logical: disk.LogicalBlockSize(), metaOnly: opts.MetadataOnly}
	d.readOnly.Store(opts.ReadOnly)
	d.mapping = Mapping{dev: d, index: pageindex.New[Folio](m.cfg.Index)}
	d.mapping.bindMarkSteps()
	if m.cfg.OneGoroutine {
		d.mapping.index.Confine()
		d.mapping.privateLock.Confine()
		blk.Confine(disk)
	}
	if m.cfg.Folios == FoliosLarge {
		d.mapping.large, d.mapping.maxOrder = true, maxPagecacheOrder(m.pageShift)
	}
	d.raPages, d.ioPages = raLimits(disk, opts.ReadAheadKB, m.cfg.PageSize)
	d.ownPlug = queueVersion618(disk)
	d.ra.init()
	d.setInitBlocksize()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hasDiskLocked(disk) { // added meanwhile by another goroutine
		return nil, errDiskAdded(disk)
	}
	m.devices = append(m.devices, d)
	d.updateTracer()
	return d, nil
}

// hasDiskLocked reports whether disk is already one of m's devices: the same
// pointer (a disk that is a value, not a pointer, has no identity to
// compare, and two equal values may be two disks). m.mu is held.
// O(devices).
func (m *Machine) hasDiskLocked(disk blk.Device) bool {
	v := reflect.ValueOf(disk)
	if v.Kind() != reflect.Pointer {
		return false
	}
	for _, o := range m.devices {
		if w := reflect.ValueOf(o.disk); w.Kind() == reflect.Pointer && w.Type() == v.Type() && w.Pointer() == v.Pointer() {
			return true
		}
	}
	return false
}

// errDiskAdded is AddDisk's error for a disk the machine already has.
func errDiskAdded(disk blk.Device) error {
	return fmt.Errorf("%w: %s is already a block device of this machine (a disk has one page cache: open it again with BlockDevice.Open)", ErrBadDevice, disk.Name())
}

// setInitBlocksize models set_init_blocksize (block/bdev.c): i_blkbits from
// the machine's policy and, from v6.15, the mapping's minimum folio order,
// get_order of it (0: the policy never picks more than PAGE_SIZE). The
// device was validated by AddDisk, so the policy cannot fail.
func (d *BlockDevice) setInitBlocksize() {
	bsize, err := d.m.cfg.InitBlocksize.InitBlocksize(d.size, d.logical, d.m.cfg.PageSize)
	if err != nil {
		panic(fmt.Sprintf("bufcache: set_init_blocksize of a validated device: %v", err))
	}
	d.setBlkbits(bsize)
}

// setBlkbits sets i_blkbits to log2(size) and, on a mapping with large
// folios, the minimum folio order (mapping_set_folio_min_order).
func (d *BlockDevice) setBlkbits(size uint32) {
	d.blkbits.Store(uint32(blocksize.Log2(size)))
	if d.mapping.large {
		d.mapping.minOrder.Store(uint32(blocksize.MinFolioOrder(size, d.m.cfg.PageSize)))
	}
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

// ReadAheadKB returns the device's readahead window's maximum in KiB
// (read_ahead_kb: DeviceOptions.ReadAheadKB, or the queue's default — 128
// KiB on a disk, two stripes on an md array). O(1).
func (d *BlockDevice) ReadAheadKB() uint32 {
	return uint32(d.raPages * uint64(d.m.cfg.PageSize) >> 10)
}

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

// NrPages returns the number of pages in the device's page cache
// (mapping->nrpages): those of every folio, whatever its order.
func (d *BlockDevice) NrPages() int { return int(d.mapping.pages()) }

// NrFolios returns the number of folios in the device's page cache (one per
// page index before v6.15).
func (d *BlockDevice) NrFolios() int { return d.mapping.index.Len() }

// MinFolioOrder returns mapping_min_folio_order of the device's mapping:
// get_order of the block size on a mapping with large folios (v6.15+), 0
// otherwise.
func (d *BlockDevice) MinFolioOrder() uint8 { return d.mapping.minFolioOrder() }

// MaxFolioOrder returns mapping_max_folio_order: MAX_PAGECACHE_ORDER on a
// mapping with large folios (FoliosLarge), 0 otherwise.
func (d *BlockDevice) MaxFolioOrder() uint8 { return d.mapping.maxOrder }

// LargeFolios reports mapping_large_folio_support.
func (d *BlockDevice) LargeFolios() bool { return d.mapping.large }

// IndexHeight returns the height of the page-cache index tree.
func (d *BlockDevice) IndexHeight() int { return d.mapping.index.Height() }

// SetBlocksize models set_blocksize under the machine's rules
// (Config.SetBlocksize). With blocksize.RulesPageSize (v5.x–v6.14): validate
// size, do nothing if it equals the current block size, else write back all
// dirty buffers (sync_blockdev), set i_blkbits and throw the whole page cache
// away (kill_bdev), which first empties every CPU's bh LRU. With
// blocksize.RulesLarge (v6.15+): bdev_validate_blocksize (sizes up to
// 64 KiB), then, on a change, sync_blockdev, kill_bdev, i_blkbits and the
// mapping's minimum folio order (get_order(size)), and kill_bdev again.
// Errors: a *blocksize.SizeError for a size that is not a power of two,
// below 512, above the rules' maximum (PAGE_SIZE or 64 KiB) or below the
// logical block size (nothing changes); the kernel's -EINVAL (Errno). A
// write error during the sync is ignored, and consumed, as set_blocksize
// does.
func (d *BlockDevice) SetBlocksize(cpu *CPU, size uint32) error {
	if err := d.m.cfg.SetBlocksize.Validate(size, d.logical, d.m.cfg.PageSize); err != nil {
		return err
	}
	bits := uint32(blocksize.Log2(size))
	if d.blkbits.Load() == bits {
		return nil
	}
	if d.m.cfg.SetBlocksize == blocksize.RulesLarge {
		// filemap_invalidate_lock: no reader adds a folio of the old minimum
		// order once the page cache is truncated (v6.15's comment on
		// set_blocksize). The inode lock it also takes excludes nothing the
		// model runs.
		d.mapping.invalidateLock.Lock()
		defer d.mapping.invalidateLock.Unlock()
		_ = d.SyncBlockdev(cpu)
		d.killBdev(cpu)
	} else {
		_ = d.SyncBlockdev(cpu)
	}
	d.setBlkbits(size)
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
		last := index
		// The mapping is checked before the lock as well as after: Next
		// takes no reference, so f may be a freed frame that a new folio is
		// being built in (see writeDirty).
		if f.tryGet(cpu) {
			if f.mapping.Load() == m {
				f.lockFolio(cpu)
				if f.mapping.Load() == m {
					last = f.index + (f.NrPages() - 1) // the whole folio goes
					waitOnWriteback(cpu, f)
					d.invalidateFolio(cpu, f)
					m.remove(cpu, f)
				}
				f.unlockFolio()
			}
			f.put(cpu)
		}
		if last == ^uint64(0) {
			return
		}
		start = last + 1
	}
}

// invalidateFolio models block_invalidate_folio over the whole folio: discard
// every buffer (lock, clear Dirty, Mapped, Req, New, Delay, Unwritten and
// b_bdev, unlock),
// then try to free the ring. The folio is locked.
func (d *BlockDevice) invalidateFolio(cpu *CPU, f *Folio) {
	d.invalidateRange(cpu, f, 0, d.FolioSize(f))
}

// invalidateRange models block_invalidate_folio(folio, from, to − from) for a
// locked folio: discard the buffers that lie wholly in [from, to) of the
// folio, stopping at the first one that ends past to; only when the whole
// folio is invalidated is the ring then freed (filemap_release_folio; busy
// buffers stay with the folio).
func (d *BlockDevice) invalidateRange(cpu *CPU, f *Folio, from, to uint64) {
	head := f.private
	if head == nil {
		return
	}
	off := uint64(0)
	for bh := range head.ring(cpu) {
		next := off + uint64(bh.size)
		if next > to {
			return
		}
		if from <= off {
			LockBuffer(cpu, bh)
			bh.clearBit(cpu, BHDirty)
			bh.state.Clear(BHMapped | BHReq | BHNew | BHDelay | BHUnwritten) // BUFFER_FLAGS_DISCARD, one cmpxchg
			cpu.count(EvBHBit)
			bh.bdev.Store(nil, d.m.cfg.OneGoroutine) // discard_buffer: a stale LRU entry no longer matches
			UnlockBuffer(cpu, bh)
		}
		off = next
	}
	if from == 0 && to == d.FolioSize(f) {
		_ = d.tryToFreeBuffers(cpu, f) // busy buffers stay with the orphaned folio
	}
}
