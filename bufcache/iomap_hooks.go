package bufcache

import (
	"errors"
	"fmt"
	"math/bits"
)

// This file holds the library's extension points: the primitives a buffered
// write built outside this package needs (package iomap builds v6.6's
// iomap_file_buffered_write on them). Each wraps the function the package's
// own write path uses, so both paths share one model of every step.

// ErrBadRange: a write_begin range that does not lie inside one folio (the
// kernel would BUG).
var ErrBadRange = errors.New("bufcache: range outside the folio")

// BlockMapper is the get_block step of __block_write_begin_int: it maps a
// buffer for a write (get_block_t with create = 1, or iomap_to_bh when
// __block_write_begin_int is called from iomap). MapBlock maps bh, which holds
// block number block (in units of its size) of d's page cache, with MapBH, and
// may mark it new (SetNew). An error stops the write's preparation and is
// returned by BlockWriteBegin.
type BlockMapper interface {
	MapBlock(cpu *CPU, d *BlockDevice, bh *BufferHead, block uint64) error
}

// mapWith runs a supplied get_block step, counted as EvGetBlock like
// blkdev_get_block.
func (d *BlockDevice) mapWith(cpu *CPU, mapper BlockMapper, bh *BufferHead, block uint64) error {
	cpu.count(EvGetBlock)
	return mapper.MapBlock(cpu, d, bh, block)
}

// MapBH models map_bh: bh now maps block number block of d (b_bdev,
// b_blocknr, BH_Mapped: an EvBHBit on cpu). For a BlockMapper. O(1).
func MapBH(cpu *CPU, bh *BufferHead, d *BlockDevice, block uint64) {
	bh.setBlockNr(block)
	bh.bdev.Store(d, d.m.cfg.OneGoroutine)
	bh.setBit(cpu, BHMapped)
}

// SetNew models set_buffer_new: the mapper just allocated the block, so its
// old contents on disk are not worth reading. For a BlockMapper; it counts
// an EvBHBit on cpu.
func (bh *BufferHead) SetNew(cpu *CPU) { bh.setBit(cpu, BHNew) }

// newBuffer models __block_write_begin_int's handling of a buffer the mapper
// marked new (clean_bdev_bh_alias has nothing to do on the block device's own
// inode): in an uptodate folio it is uptodate and dirty at once and no longer
// new; otherwise the parts of its block outside [from, to) are zeroed
// (folio_zero_segments), since they will not be read.
func newBuffer(cpu *CPU, f *Folio, bh *BufferHead, start, from, to uint32) {
	if f.Has(FolioUptodate) {
		bh.clearBit(cpu, BHNew)
		bh.setBit(cpu, BHUptodate)
		MarkBufferDirty(cpu, bh)
		return
	}
	if f.data == nil {
		return
	}
	end := start + bh.size
	if start < from {
		clear((*f.data)[start:from])
	}
	if end > to {
		clear((*f.data)[max(to, start):end])
	}
}

// zeroNewBuffers models folio_zero_new_buffers(folio, from, to): every new
// buffer overlapping [from, to) of a folio that is not uptodate has that part
// zeroed and becomes uptodate; each one overlapping is then no longer new, and
// dirty. The folio is locked.
func zeroNewBuffers(cpu *CPU, f *Folio, from, to uint32) {
	start := uint32(0)
	for bh := range f.private.ring(cpu) {
		end := start + bh.size
		if bh.Has(BHNew) && end > from && start < to {
			if !f.Has(FolioUptodate) {
				if f.data != nil {
					clear((*f.data)[max(from, start):min(to, end)])
				}
				bh.setBit(cpu, BHUptodate)
			}
			bh.clearBit(cpu, BHNew)
			MarkBufferDirty(cpu, bh)
		}
		start = end
	}
}

// GetWriteFolio models __filemap_get_folio with FGP_WRITEBEGIN and
// fgf_set_order(n), as iomap_write_begin calls it (__iomap_get_folio) for a
// write of n bytes at pos: the folio spanning byte pos of the device,
// created if absent, locked, and not under writeback (the model waits for a
// folio's writeback before a write changes it, as for every write, so that
// the copy and the disk's read of the data never race). A new folio is of order ilog2(n) − PAGE_SHIFT (0 for
// writes of less than two pages), capped by the mapping's maximum (0 without
// large folios), at least its minimum, and no larger than pos's alignment
// allows; smaller ones are tried where part of the range is cached. pos must
// lie inside the device, as the caller's mapping guarantees. Prepare the
// folio with BlockWriteBegin. O(index height).
func (d *BlockDevice) GetWriteFolio(cpu *CPU, pos, n uint64) *Folio {
	var order uint8
	if shift := bits.Len64(n) - 1; n > 0 && shift > int(d.m.pageShift) {
		order = uint8(min(shift-int(d.m.pageShift), maxFolioOrder))
	}
	f := d.mapping.getFolioOrder(cpu, pos>>d.m.pageShift, fgpLock|fgpCreat, order)
	waitOnWriteback(cpu, f)
	return f
}

// FolioPos returns folio_pos(f): the byte position of f's first byte in its
// device.
func (d *BlockDevice) FolioPos(f *Folio) uint64 { return f.index << d.m.pageShift }

// FolioSize returns folio_size(f): PAGE_SIZE << f.Order().
func (d *BlockDevice) FolioSize(f *Folio) uint64 { return uint64(d.m.cfg.PageSize) << f.order }

// BlockWriteBegin models __block_write_begin_int(folio, pos, n, get_block,
// iomap) on a folio from GetWriteFolio: buffers are created if the folio has
// none, the unmapped buffers of [pos, pos+n) are mapped by mapper (nil:
// blkdev_get_block), new ones are zeroed around the range, and the others the
// range covers only partly are read first unless uptodate. On error the folio
// is unlocked and released, as block_write_begin and iomap_write_begin do.
//
// Errors: ErrBadRange if n is 0 or [pos, pos+n) leaves f; ErrIO if a read
// failed; the mapper's error. O(buffers per folio).
func (d *BlockDevice) BlockWriteBegin(cpu *CPU, f *Folio, pos, n uint64, mapper BlockMapper) error {
	fsize, fpos := d.FolioSize(f), d.FolioPos(f)
	from := pos - fpos
	var err error
	if n == 0 || pos < fpos || from >= fsize || n > fsize-from {
		err = fmt.Errorf("%w: [%d, +%d) in page %d", ErrBadRange, pos, n, f.index)
	} else {
		err = d.blockWriteBeginMap(cpu, f, uint32(from), uint32(from+n), mapper)
	}
	if err != nil {
		f.unlockFolio()
		f.put(cpu)
	}
	return err
}

// WriteEnd models iomap_write_end for a buffer-head mapping of the block
// device: block_write_end — a short copy into a folio that is not uptodate
// accepts nothing, and the new buffers of the part not accepted are zeroed
// (folio_zero_new_buffers); __block_commit_write marks the accepted buffers
// uptodate and dirty — then the folio is unlocked and released
// (__iomap_put_folio). i_size never changes for a block device. It returns
// the bytes accepted. O(buffers per folio).
func (d *BlockDevice) WriteEnd(cpu *CPU, f *Folio, pos, n, copied uint64) uint64 {
	if copied < n {
		from := uint32(pos - d.FolioPos(f))
		kept := uint32(copied)
		if !f.Has(FolioUptodate) {
			kept = 0
		}
		zeroNewBuffers(cpu, f, from+kept, from+uint32(n))
	}
	return d.writeEnd(cpu, f, pos, n, copied)
}

// BalanceDirtyPages models balance_dirty_pages_ratelimited as the write paths
// call it once per iteration: see Config.DirtyLimit.
func (d *BlockDevice) BalanceDirtyPages(cpu *CPU) { d.balanceDirtyPages(cpu) }

// DebugCheck runs the invariant checker (Check) when the machine was built
// with Config.Check, and panics on a violation, as the package's own
// operations do at their end.
func (d *BlockDevice) DebugCheck() { d.debugCheck() }

// FaultInReadable models fault_in_iov_iter_readable(i, n): it touches one
// byte of every user page the next n bytes span (EvFaultInPage each), stops
// at the first unreadable one, and returns how many of the n bytes could not
// be faulted in: n means none could (the callers' -EFAULT). O(pages).
func (it *IovIter) FaultInReadable(cpu *CPU, n uint64) uint64 { return it.faultInReadable(cpu, n) }

// CopyToFolio models copy_folio_from_iter_atomic: copy up to n of the next
// bytes into f at byte offset in the folio (nothing is stored on a
// metadata-only device), stopping at an unreadable byte or at the end of the
// folio, and advance. It returns the bytes copied (EvCopyByte each).
func (it *IovIter) CopyToFolio(cpu *CPU, f *Folio, offset, n uint64) uint64 {
	fsize := uint64(cpu.m.cfg.PageSize) << f.order
	if offset >= fsize {
		return 0
	}
	n = min(n, fsize-offset)
	var dst []byte
	if f.data != nil {
		dst = (*f.data)[offset : offset+n]
	}
	return it.copyFrom(cpu, dst, n)
}

// Revert gives back n consumed bytes (iov_iter_revert): the part of a copy
// write_end did not accept. n must not exceed what was consumed.
func (it *IovIter) Revert(n uint64) { it.revert(n) }

// Truncate limits the iterator to n bytes (iov_iter_truncate) and returns how
// many it cut off, for Reexpand.
func (it *IovIter) Truncate(n uint64) uint64 { return it.truncate(n) }

// Reexpand gives back the cut bytes Truncate returned (iov_iter_reexpand to
// the count before the truncation): the caller sees what was not written.
func (it *IovIter) Reexpand(cut uint64) { it.count += cut }

// CountEvent records one event on c, for operations modelled outside this
// package (iomap_begin calls, WARNs). Call it from the goroutine driving c.
func (c *CPU) CountEvent(e Event) { c.count(e) }
