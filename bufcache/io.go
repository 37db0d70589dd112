package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// bhBio is the bio submit_bh builds for one buffer, with the CPU that submitted
// it (completion events are counted there).
type bhBio struct {
	bio blk.Bio
	bh  *BufferHead
	cpu *CPU
}

// submitBH models submit_bh_wbc: one bio of one segment for a locked, mapped
// buffer with its b_end_io set. It sets BH_Req (a rewrite clears BH_Write_EIO)
// and starts the bio at sector b_blocknr × (b_size / 512).
func submitBH(cpu *CPU, op blk.Op, bh *BufferHead) {
	if !bh.Has(BHLock|BHMapped) || bh.endIO == endNone {
		panic(fmt.Sprintf("bufcache: submit_bh of %v", bh))
	}
	if bh.testSet(BHReq) && op == blk.OpWrite {
		bh.clear(BHWriteEIO)
	}
	bb := bioPool.Get().(*bhBio)
	bb.bh, bb.cpu = bh, cpu
	bb.bio.Reset(op, bh.blocknr*uint64(bh.size>>blk.SectorShift))
	bb.bio.AddVec(bh.Data(), bh.size)
	bb.bio.EndIO = endBioBH
	bb.bio.Private = bb
	cpu.count(EvBioSubmit)
	d := bh.bdev.Load()
	if d == nil {
		panic(fmt.Sprintf("bufcache: submit_bh of %v without a device", bh))
	}
	d.disk.Submit(&bb.bio)
}

// endBioBH models end_bio_bh_io_sync: hand the bio's status to the buffer's
// b_end_io and free the bio.
func endBioBH(b *blk.Bio) {
	bb := b.Private.(*bhBio)
	bh, cpu, ok := bb.bh, bb.cpu, b.Err == nil
	bb.bh, bb.cpu = nil, nil
	b.Reset(blk.OpRead, 0)
	bioPool.Put(bb)
	cpu.count(EvBioComplete)
	switch bh.endIO {
	case endReadSync:
		endBufferReadSync(cpu, bh, ok)
	case endWriteSync:
		endBufferWriteSync(cpu, bh, ok)
	default:
		panic(fmt.Sprintf("bufcache: bio completion for %v without b_end_io", bh))
	}
}

// endBufferReadSync models end_buffer_read_sync: record the outcome in
// BH_Uptodate, unlock, and drop the reference taken for the I/O.
func endBufferReadSync(cpu *CPU, bh *BufferHead, ok bool) {
	if ok {
		bh.set(BHUptodate)
	} else {
		bh.clear(BHUptodate)
	}
	UnlockBuffer(cpu, bh)
	Brelse(cpu, bh)
}

// endBufferWriteSync models end_buffer_write_sync: on failure the buffer gets
// BH_Write_EIO and loses BH_Uptodate ("lost sync page write"); then unlock and
// drop the I/O reference.
func endBufferWriteSync(cpu *CPU, bh *BufferHead, ok bool) {
	if ok {
		bh.set(BHUptodate)
	} else {
		cpu.count(EvWarning)
		bh.set(BHWriteEIO)
		bh.clear(BHUptodate)
	}
	UnlockBuffer(cpu, bh)
	Brelse(cpu, bh)
}

// MarkBufferDirty models mark_buffer_dirty: set BH_Dirty and, on a clean→dirty
// transition, dirty the folio and tag it in the index. Marking a buffer that is
// not uptodate only warns, as the kernel's WARN_ON_ONCE does (EvWarning); the
// buffer is still dirtied. The caller holds a reference.
func MarkBufferDirty(cpu *CPU, bh *BufferHead) {
	if !bh.Has(BHUptodate) {
		cpu.count(EvWarning)
	}
	if bh.Has(BHDirty) || bh.testSet(BHDirty) {
		return
	}
	cpu.count(EvMarkDirty)
	if m := bh.folio.mapping.Load(); m != nil {
		m.setDirty(bh.folio)
	} else {
		bh.folio.set(FolioDirty) // an orphaned folio: no index to tag
	}
	if d := bh.bdev.Load(); d != nil {
		d.debugCheck()
	}
}

// SyncDirtyBuffer models sync_dirty_buffer: lock the buffer; if it is dirty,
// write it synchronously and wait. Errors: ErrUnmapped for a dirty buffer that
// is not mapped (its dirty bit is cleared and nothing is written), ErrIO if the write failed (the buffer then
// has BH_Write_EIO and is no longer uptodate). A clean buffer returns nil
// without I/O. The caller holds a reference.
func SyncDirtyBuffer(cpu *CPU, bh *BufferHead) error {
	LockBuffer(cpu, bh)
	if !bh.testClear(BHDirty) {
		UnlockBuffer(cpu, bh)
		return nil
	}
	d := bh.bdev.Load()
	if !bh.Has(BHMapped) || d == nil {
		UnlockBuffer(cpu, bh)
		return fmt.Errorf("%w: sync write of %v", ErrUnmapped, bh)
	}
	bh.get(cpu)
	bh.endIO = endWriteSync
	submitBH(cpu, blk.OpWrite, bh)
	waitOnBuffer(bh)
	if !bh.Has(BHUptodate) {
		return fmt.Errorf("%w: write of block %d (size %d) on %s", ErrIO, bh.blocknr, bh.size, d.Name())
	}
	return nil
}

// SyncBlockdev models sync_blockdev: write back every dirty buffer of the
// device, folio by folio in index order, and wait. Here each dirty mapped buffer
// is written synchronously (the plugged, per-buffer async writeback of
// block_write_full_folio comes with the write path); a folio whose buffers are
// all clean afterwards is cleaned. It returns the write errors met, joined
// (errors.Is ErrIO), after trying every buffer.
func (d *BlockDevice) SyncBlockdev(cpu *CPU) error {
	m := &d.mapping
	var errs []error
	for start := uint64(0); ; {
		index, f, ok := m.index.NextMarked(start, pageindex.MarkDirty)
		if !ok {
			break
		}
		if f.tryGet(cpu) {
			f.lockFolio(cpu)
			if f.mapping.Load() == m {
				errs = append(errs, d.writeFolioBuffers(cpu, f)...)
			}
			f.unlockFolio()
			f.put(cpu)
		}
		if index == ^uint64(0) {
			break
		}
		start = index + 1
	}
	d.debugCheck()
	return errors.Join(errs...)
}

// writeFolioBuffers writes every dirty buffer of a locked folio. As writeback
// does (folio_clear_dirty_for_io), the folio's dirty bit is cleared before the
// buffers are written, so a buffer dirtied meanwhile by another CPU dirties the
// folio again instead of being lost.
func (d *BlockDevice) writeFolioBuffers(cpu *CPU, f *Folio) []error {
	var errs []error
	d.mapping.cancelDirty(f)
	if head := f.private; head != nil {
		for bh := head; ; {
			cpu.count(EvRingWalk)
			if bh.Has(BHDirty) {
				if err := SyncDirtyBuffer(cpu, bh); err != nil {
					errs = append(errs, err)
				}
			}
			if bh = bh.thisPage; bh == head {
				break
			}
		}
	}
	return errs
}
