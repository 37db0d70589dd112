package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
)

// Errors of the block-device write entry.
var (
	// ErrReadOnly is -EPERM: a write to a read-only block device.
	ErrReadOnly = errors.New("bufcache: block device is read-only")
	// ErrNoSpace is -ENOSPC: a write starting at or past the end of the device.
	ErrNoSpace = errors.New("bufcache: write at or past the end of the device")
)

// Write models a buffered write(2) to the block device node at byte position
// pos, from it: blkdev_write_iter's checks, then generic_perform_write through
// buffer heads (≤ v6.5). Writes crossing the end of the device are shortened;
// an empty write does nothing. It returns the bytes written.
//
// Errors: ErrReadOnly; ErrNoSpace when pos is at or past the end; ErrFault when
// the user buffer is unreadable where the write starts (a write that stops at
// an unreadable byte later returns what it wrote, as the kernel does); ErrIO
// when a partially covered block could not be read first. Data written stays in
// the page cache, dirty, until writeback (SyncBlockdev, or the dirty limit).
func (d *BlockDevice) Write(cpu *CPU, pos uint64, it *IovIter) (uint64, error) {
	switch {
	case d.ReadOnly():
		return 0, fmt.Errorf("%w: %s", ErrReadOnly, d.Name())
	case it.Count() == 0:
		return 0, nil
	case pos >= d.size:
		return 0, fmt.Errorf("%w: position %d on %s of %d bytes", ErrNoSpace, pos, d.Name(), d.size)
	}
	shortened := it.truncate(d.size - pos)
	defer d.debugCheck()
	n, err := d.performWrite(cpu, pos, it)
	it.count += shortened // iov_iter_reexpand: the caller sees what was not written
	return n, err
}

// performWrite models generic_perform_write (v5.16–v6.11 form) with v6.x's
// chunk, mapping_max_folio_size (PAGE_SIZE without large folios): per
// iteration, pre-fault at most the user bytes of the chunk; write_begin (a
// folio of the mapping's minimum order); copy at most to the end of that
// folio; write_end; on a short copy into a folio that is not uptodate, retry
// with the bytes that could be copied; then balance the dirty pages. Without
// large folios that is one page per iteration. (Block devices of v6.15+ write
// through iomap, package iomap; this path with large folios is the combination
// no kernel ran.)
func (d *BlockDevice) performWrite(cpu *CPU, pos uint64, it *IovIter) (uint64, error) {
	chunk := uint64(d.m.cfg.PageSize) << d.mapping.maxOrder
	var written uint64
	for it.Count() > 0 {
		offset := pos & (chunk - 1)
		bytes := min(chunk-offset, it.Count())
	retry:
		cpu.count(EvWriteIter)
		if it.faultInReadable(cpu, bytes) == bytes {
			return written, faultErr(written, pos)
		}
		f, err := d.writeBegin(cpu, pos, bytes)
		if err != nil {
			if written > 0 {
				return written, nil
			}
			return 0, err
		}
		offset = pos - f.index<<d.m.pageShift
		bytes = min(bytes, uint64(d.m.cfg.PageSize)<<f.order-offset)
		var dst []byte
		if f.data != nil {
			dst = (*f.data)[offset : offset+bytes]
		}
		copied := it.copyFrom(cpu, dst, bytes)
		status := d.writeEnd(cpu, f, pos, bytes, copied)
		it.revert(copied - status)
		if status == 0 {
			if copied == 0 {
				return written, faultErr(written, pos)
			}
			bytes = copied
			goto retry
		}
		pos += status
		written += status
		d.balanceDirtyPages(cpu)
	}
	return written, nil
}

// faultErr is the result of a write that met an unreadable user page: what
// was written, or ErrFault if nothing was.
func faultErr(written, pos uint64) error {
	if written > 0 {
		return nil
	}
	return fmt.Errorf("%w: write at %d", ErrFault, pos)
}

// writeBegin models blkdev_write_begin = block_write_begin: get the folio at
// pos locked (FGP_WRITEBEGIN, the mapping's minimum order), then prepare its
// buffers for the write of n bytes at pos, or of those that fall in the folio
// (__block_write_begin_int with blkdev_get_block). On error the folio is
// unlocked and released.
//
// The model also waits for the folio's writeback to finish, as FGP_STABLE does
// for mappings that need stable pages. The block device's mapping does not, and
// the kernel lets a writer change a page while it is written out (the buffer is
// simply dirty again); in Go that would be a data race between the copy and
// the device reading the page. Only rewrites of a page under writeback wait.
func (d *BlockDevice) writeBegin(cpu *CPU, pos, n uint64) (*Folio, error) {
	f := d.mapping.getFolio(cpu, pos>>d.m.pageShift, fgpLock|fgpCreat)
	waitOnWriteback(cpu, f)
	from := pos - f.index<<d.m.pageShift
	n = min(n, uint64(d.m.cfg.PageSize)<<f.order-from)
	if err := d.blockWriteBegin(cpu, f, uint32(from), uint32(from+n)); err != nil {
		f.unlockFolio()
		f.put(cpu)
		return nil, err
	}
	return f, nil
}

// blockWriteBegin models __block_write_begin_int for the block device: give a
// locked folio (of any order) buffers of the current block size if it has
// none, map every buffer the range [from, to) of byte offsets in the folio
// touches (identity get_block), and read first the buffers the range covers
// only partly, whole, unless they or the folio are uptodate (one bio of the
// block size each: at 16 KiB blocks a 4 KiB write reads 16 KiB).
// Buffers outside the range become uptodate if the folio is. Returns ErrIO if a
// read failed.
func (d *BlockDevice) blockWriteBegin(cpu *CPU, f *Folio, from, to uint32) error {
	return d.blockWriteBeginMap(cpu, f, from, to, nil)
}

// blockWriteBeginMap is blockWriteBegin with its get_block step supplied:
// mapper maps the unmapped buffers of the range (nil: blkdev_get_block; package
// iomap passes iomap_to_bh). A buffer the mapper marks new is not read
// (newBuffer). On an error, from a read or from the mapper (which stops the
// walk), the new buffers of the range are zeroed (folio_zero_new_buffers).
func (d *BlockDevice) blockWriteBeginMap(cpu *CPU, f *Folio, from, to uint32, mapper BlockMapper) error {
	head := f.private
	if head == nil {
		head = d.createEmptyBuffers(cpu, f, d.BlockSize(), 0)
	}
	size := head.size // the ring's own size decides the numbering (per-page block size since 3.7)
	block := uint64(blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}.FirstBlock(blocksize.PageIndex(f.index)))
	uptodate := f.Has(FolioUptodate)
	var err error
	start := uint32(0)
	for bh := range head.ring(cpu) {
		end := start + size
		switch {
		case end <= from || start >= to:
			if uptodate && !bh.Has(BHUptodate) {
				bh.setBit(cpu, BHUptodate)
			}
		default:
			if bh.Has(BHNew) {
				bh.clearBit(cpu, BHNew)
			}
			if !bh.Has(BHMapped) {
				if mapper == nil {
					d.getBlock(cpu, bh, block)
				} else if merr := d.mapWith(cpu, mapper, bh, block); merr != nil {
					zeroNewBuffers(cpu, f, from, to)
					return merr
				} else if bh.Has(BHNew) {
					newBuffer(cpu, f, bh, start, from, to)
					break // nothing on disk is worth reading for a new block
				}
			}
			if uptodate {
				if !bh.Has(BHUptodate) {
					bh.setBit(cpu, BHUptodate)
				}
			} else if !bh.Has(BHUptodate) && (start < from || end > to) && err == nil {
				err = readBufferSync(cpu, bh)
			}
		}
		block++
		start = end
	}
	if err != nil {
		zeroNewBuffers(cpu, f, from, to)
	}
	return err
}

// getBlock models blkdev_get_block: map bh to block of this device, with no
// bounds check (the write entry already shortened the write to the device).
func (d *BlockDevice) getBlock(cpu *CPU, bh *BufferHead, block uint64) {
	cpu.count(EvGetBlock)
	bh.setBlockNr(block)
	bh.bdev.Store(d, d.m.cfg.OneGoroutine)
	bh.setBit(cpu, BHMapped)
}

// writeEnd models blkdev_write_end = block_write_end + unlock + put: if fewer
// than n bytes were copied into a folio that is not uptodate, nothing is
// accepted (the caller retries); otherwise __block_commit_write marks every
// buffer of the copied range uptodate and dirty, and the folio uptodate when no
// buffer outside the range is stale. It returns the bytes accepted.
func (d *BlockDevice) writeEnd(cpu *CPU, f *Folio, pos, n, copied uint64) uint64 {
	if copied < n && !f.Has(FolioUptodate) {
		copied = 0
	}
	if copied > 0 {
		from := uint32(pos - f.index<<d.m.pageShift)
		d.commitWrite(cpu, f, from, from+uint32(copied))
	}
	f.unlockFolio()
	f.put(cpu)
	return copied
}

// commitWrite models __block_commit_write over [from, to) of a locked folio.
func (d *BlockDevice) commitWrite(cpu *CPU, f *Folio, from, to uint32) {
	partial := false
	start := uint32(0)
	for bh := range f.private.ring(cpu) {
		if start+bh.size <= from || start >= to {
			if !bh.Has(BHUptodate) {
				partial = true
			}
		} else {
			bh.setBit(cpu, BHUptodate)
			MarkBufferDirty(cpu, bh)
		}
		if cpu.m.cfg.BitOps.commitClearsNew(bh.Has(BHNew)) {
			bh.clearBit(cpu, BHNew)
		}
		start += bh.size
	}
	if !partial {
		f.flags.Set(FolioUptodate)
	}
}

// createEmptyBuffers models create_empty_buffers (folio_create_empty_buffers):
// build a ring of size-byte buffers with the given state (alloc_page_buffers,
// then mainline's tail walk that ORs the state in and closes the ring), then,
// under private_lock, make every buffer uptodate and/or dirty if the folio is,
// and attach the ring. The folio is locked. It returns the head.
func (d *BlockDevice) createEmptyBuffers(cpu *CPU, f *Folio, size uint32, state BHState) *BufferHead {
	head := cpu.allocPageBuffers(f, size, state)
	cpu.closeRing(head, state)
	m := &d.mapping
	cpu.count(EvPrivateLock)
	m.privateLock.Lock()
	var extra BHState
	if f.Has(FolioUptodate) {
		extra |= BHUptodate
	}
	if f.Has(FolioDirty) {
		extra |= BHDirty
	}
	if extra != 0 { // set_buffer_dirty, set_buffer_uptodate
		for bh := range head.ring(cpu) {
			if extra&BHDirty != 0 {
				bh.setBit(cpu, BHDirty)
			}
			if extra&BHUptodate != 0 {
				bh.setBit(cpu, BHUptodate)
			}
		}
	}
	cpu.attachBuffers(f, head)
	m.privateLock.Unlock()
	return head
}
