package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// Getblk models __getblk_gfp / bdev_getblk followed by __getblk_slow: return the
// buffer of block, creating its folio and buffer ring if needed. The buffer
// comes back referenced and unlocked, mapped, and not necessarily uptodate.
// Its lookups are bdev_getblk's with a gfp that may sleep: __find_get_block,
// or, with LookupNonatomic (v6.16+), __find_get_block_nonatomic. On a mapping
// with large folios the folio is created at the mapping's minimum order (a
// block larger than a page gets one folio), and a block inside a larger
// folio, created by a write or readahead, gets a buffer of that folio's ring.
//
// Errors: ErrInvalidBlockSize if size is not a power of two from 512 to
// PAGE_SIZE (64 KiB under blocksize.RulesLarge) or not a multiple of the
// logical block size (the kernel checks only the
// multiple and the range, and would admit e.g. 1536, which grow_buffers then
// mis-sizes; the model refuses it); ErrOutOfRange if the block's page index
// overflows; ErrBeyondDevice if block is at or past the device's end (the folio
// and its buffers are still created, the tail ones unmapped, as in the kernel).
//
// size should be the device's block size. When it is not, the result depends on
// where the two geometries put the block, as in the kernel: the lookup (by
// i_blkbits) may find a buffer of the device's size carrying that number, or —
// where the kernel's __getblk_slow would loop forever between growing one page
// and searching another — the model returns ErrSizeMismatch after one futile
// round. Growing may also free a page's buffers of the other size. When they
// are busy, the kernel retries until they are not (before 4.16 its
// free_more_memory woke the flusher, wakeup_flusher_threads, between tries);
// the model writes the device back once, as the flusher would (WB_SYNC_NONE:
// dirty buffers become freeable, locked ones are skipped), and then returns
// ErrBuffersBusy, wrapped, if a buffer is still referenced or locked (by a
// caller, or referenced by a CPU's bh LRU). That writeback locks the device's
// dirty folios one by one: the caller must not hold a folio lock of this
// device when it calls Getblk or Bread (the kernel's getblk locks only the
// folio it grows).
func (d *BlockDevice) Getblk(cpu *CPU, block uint64, size uint32) (*BufferHead, error) {
	if bh := d.findGetBlockBlocking(cpu, block, size); bh != nil {
		return bh, nil
	}
	return d.getblkSlow(cpu, block, size)
}

// getblkSlow models __getblk_slow: validate size, then alternate grow_buffers
// and __find_get_block until the buffer is found.
func (d *BlockDevice) getblkSlow(cpu *CPU, block uint64, size uint32) (*BufferHead, error) {
	if maxSize := d.m.cfg.SetBlocksize.MaxSize(d.m.cfg.PageSize); !blocksize.IsPowerOfTwo(size) ||
		size < blocksize.SectorSize || size > maxSize || size%d.logical != 0 {
		cpu.count(EvWarning)
		return nil, fmt.Errorf("%w: getblk(%s, %d, %d): logical block size %d, largest block %d",
			ErrInvalidBlockSize, d.Name(), block, size, d.logical, maxSize)
	}
	defer d.debugCheck()
	flushed := false
	for round := 0; ; round++ {
		err := d.growBuffers(cpu, block, size)
		if errors.Is(err, ErrBuffersBusy) && !flushed {
			// The page holds buffers of another size that cannot be freed.
			// The kernel loops until they can, which for dirty ones is when
			// the flusher has written them; the model has no flusher running
			// beside it, so it writes the device back itself, once, as the
			// flusher would (WB_SYNC_NONE: a buffer the caller may hold
			// locked is skipped, not waited for).
			flushed = true
			d.writeAndWait(cpu, wbSyncNone)
			continue
		}
		if err != nil {
			return nil, err
		}
		if bh := d.findGetBlockBlocking(cpu, block, size); bh != nil {
			return bh, nil
		}
		if round > 0 && size != d.BlockSize() {
			return nil, fmt.Errorf("%w: getblk(%s, %d, %d) with block size %d",
				ErrSizeMismatch, d.Name(), block, size, d.BlockSize())
		}
	}
}

// growBuffers models grow_buffers (v5.x): compute the page index of block for
// blocks of size bytes, refuse an index that overflows pgoff_t, and grow that
// folio's buffers.
func (d *BlockDevice) growBuffers(cpu *CPU, block uint64, size uint32) error {
	g := blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}
	if !g.BlockInRange(blocksize.Block(block)) {
		cpu.count(EvWarning)
		return fmt.Errorf("%w: block %d of size %d on %s", ErrOutOfRange, block, size, d.Name())
	}
	return d.growDevFolio(cpu, block, uint64(g.PageIndex(blocksize.Block(block))), size)
}

// growDevFolio models grow_dev_page / grow_dev_folio: find or create the folio
// spanning index (of the mapping's minimum order), locked and marked accessed; if it has buffers of this size, map any
// unmapped ones; if it has buffers of another size, free them (when they are
// busy, return ErrBuffersBusy, wrapped, for the caller to decide whether to
// retry; the kernel returns 0 and __getblk_slow loops); otherwise build a
// ring (alloc_page_buffers), attach it and initialise it under private_lock
// (link_dev_buffers + init_page_buffers). It returns ErrBeyondDevice if block is
// past the device's end for this size.
func (d *BlockDevice) growDevFolio(cpu *CPU, block, index uint64, size uint32) error {
	m := &d.mapping
	f := m.getFolio(cpu, index, fgpLock|fgpAccessed|fgpCreat)
	defer func() {
		f.unlockFolio()
		f.put(cpu)
	}()
	var end uint64
	if head := f.private; head != nil {
		if head.size != size {
			if err := d.tryToFreeBuffers(cpu, f); err != nil {
				return fmt.Errorf("getblk(%s, %d, %d) needs page %d, which holds buffers of %d bytes: %w",
					d.Name(), block, size, index, head.size, err)
			}
		} else {
			// As in the kernel, without private_lock: the folio lock excludes
			// other growers, and lookups read only mapped buffers' numbers.
			end = d.initPageBuffers(cpu, f, head, size)
			return d.beyond(block, end, size)
		}
	}
	if fsize := uint64(d.m.cfg.PageSize) << f.order; uint64(size) > fsize {
		// folio_alloc_buffers makes no buffer larger than the folio: grow
		// fails, and so does getblk (a size above the device's block size).
		return fmt.Errorf("%w: getblk(%s, %d, %d) on a folio of %d bytes", ErrSizeMismatch, d.Name(), block, size, fsize)
	}
	head := cpu.allocPageBuffers(f, size, 0)
	cpu.count(EvPrivateLock)
	m.privateLock.Lock()
	cpu.linkDevBuffers(f, head)
	end = d.initPageBuffers(cpu, f, head, size)
	m.privateLock.Unlock()
	return d.beyond(block, end, size)
}

// beyond returns ErrBeyondDevice if block is at or past end.
func (d *BlockDevice) beyond(block, end uint64, size uint32) error {
	if block < end {
		return nil
	}
	return fmt.Errorf("%w: block %d of size %d on %s (%d blocks)", ErrBeyondDevice, block, size, d.Name(), end)
}

// Bread models __bread_gfp: Getblk, then, unless the buffer is uptodate, lock
// it, read it from the device synchronously (end_buffer_read_sync) and wait.
// Errors: those of Getblk, or ErrIO (wrapping the device's error) if the read
// failed; the reference is then dropped.
func (d *BlockDevice) Bread(cpu *CPU, block uint64, size uint32) (*BufferHead, error) {
	bh, err := d.Getblk(cpu, block, size)
	if err != nil {
		return nil, err
	}
	if err := readBufferSync(cpu, bh); err != nil {
		Brelse(cpu, bh)
		return nil, err
	}
	return bh, nil
}

// readBufferSync makes a held buffer uptodate: unless it already is, lock it,
// read it from the device (end_buffer_read_sync) and wait — the core of
// __bread_slow, also used by write_begin for partially written blocks. It
// returns ErrIO if the read failed.
func readBufferSync(cpu *CPU, bh *BufferHead) error {
	if bh.Has(BHUptodate) {
		return nil
	}
	LockBuffer(cpu, bh)
	if bh.Has(BHUptodate) {
		UnlockBuffer(cpu, bh)
		return nil
	}
	bh.get(cpu)
	bh.endIO = endReadSync
	submitBH(cpu, blk.OpRead, 0, bh)
	waitOnBuffer(cpu, bh)
	if !bh.Has(BHUptodate) {
		return fmt.Errorf("%w: read of block %d (size %d)", ErrIO, bh.BlockNr(), bh.size)
	}
	return nil
}
