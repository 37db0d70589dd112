package bufcache

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// bhBio is the bio submit_bh builds for one buffer, with the CPU that submitted
// it (completion events are counted there).
type bhBio struct {
	bio blk.Bio
	bh  *BufferHead
	cpu *CPU
}

// submitBH models submit_bh_wbc: one bio of one segment for a locked, mapped
// buffer with its b_end_io set, carrying the request flags given (REQ_SYNC
// for data-integrity writeback, wbc_to_write_flags). It sets BH_Req (a rewrite clears BH_Write_EIO)
// and submits the bio at sector b_blocknr × (b_size / 512) through the CPU's
// plug (which dispatches at once when no plug is started). A block that
// straddles the end of the device is trimmed there, and a read's tail zeroed
// (guard_bio_eod).
func submitBH(cpu *CPU, op blk.Op, flags blk.BioFlags, bh *BufferHead) {
	if !bh.Has(BHLock|BHMapped) || bh.endIO == endNone {
		panic(fmt.Sprintf("bufcache: submit_bh of %v", bh))
	}
	cpu.count(EvBHBit) // test_set_buffer_req
	if bh.state.TestAndSet(BHReq) && op == blk.OpWrite {
		bh.clearBit(cpu, BHWriteEIO) // a rewrite clears it, set or not
	}
	d := bh.bdev.Load()
	if d == nil {
		panic(fmt.Sprintf("bufcache: submit_bh of %v without a device", bh))
	}
	bb := cpu.allocBio()
	bb.bh, bb.cpu = bh, cpu
	start := bh.BlockNr() * uint64(bh.size)
	bb.bio.Reset(op, start>>blk.SectorShift)
	bb.bio.Flags = flags
	n, data := bh.size, bh.Data()
	if end := start + uint64(n); end > d.size { // guard_bio_eod: trim at the device's end
		n = uint32(d.size - start)
		if data != nil {
			if op == blk.OpRead {
				clear(data[n:])
			}
			data = data[:n]
		}
	}
	bb.bio.AddPage(data, n, bh.folio.pfn, bh.offset) // one buffer in a new bio: cannot pass 4 GiB
	bb.bio.EndIO = endBioBH
	bb.bio.Private = bb
	cpu.count(EvBioSubmit)
	d.submitBio(cpu, &bb.bio)
}

// endBioBH models end_bio_bh_io_sync: hand the bio's status to the buffer's
// b_end_io and free the bio (submitBH resets it for its next use).
func endBioBH(b *blk.Bio) {
	bb := b.Private.(*bhBio)
	bh, cpu, ok := bb.bh, bb.cpu, b.Err == nil
	bb.bh, bb.cpu = nil, nil
	cpu.freeBio(bb)
	cpu.count(EvBioComplete)
	switch bh.endIO {
	case endReadSync:
		endBufferReadSync(cpu, bh, ok)
	case endWriteSync:
		endBufferWriteSync(cpu, bh, ok)
	case endAsyncWrite:
		endBufferAsyncWrite(cpu, bh, ok)
	case endAsyncRead:
		endBufferAsyncRead(cpu, bh, ok)
	default:
		panic(fmt.Sprintf("bufcache: bio completion for %v without b_end_io", bh))
	}
}

// endBufferReadSync models end_buffer_read_sync: record the outcome in
// BH_Uptodate, unlock, and drop the reference taken for the I/O.
func endBufferReadSync(cpu *CPU, bh *BufferHead, ok bool) {
	if ok {
		bh.setBit(cpu, BHUptodate)
	} else {
		bh.clearBit(cpu, BHUptodate)
	}
	UnlockBuffer(cpu, bh)
	Brelse(cpu, bh)
}

// endBufferWriteSync models end_buffer_write_sync: on failure the buffer gets
// BH_Write_EIO and loses BH_Uptodate ("lost sync page write") and the device
// records the error; then unlock and drop the I/O reference.
func endBufferWriteSync(cpu *CPU, bh *BufferHead, ok bool) {
	if ok {
		bh.setBit(cpu, BHUptodate)
	} else {
		cpu.count(EvWarning)
		markWriteIOError(cpu, bh)
	}
	UnlockBuffer(cpu, bh)
	Brelse(cpu, bh)
}

// markWriteIOError models mark_buffer_write_io_error plus the clearing of
// BH_Uptodate by the end_io handlers: BH_Write_EIO, and -EIO recorded for
// the mapping (mapping_set_error): in AS_EIO, which the next SyncBlockdev
// reports, and in its errseq, which every open File reports once. The device
// is found through the folio, which a truncate may have taken out of the page
// cache (then the error has nobody left to report to).
func markWriteIOError(cpu *CPU, bh *BufferHead) {
	bh.setBit(cpu, BHWriteEIO)
	bh.clearBit(cpu, BHUptodate)
	if m := bh.folio.mapping.Load(); m != nil {
		m.dev.mappingSetError(cpu)
	}
}

// MarkBufferDirty models mark_buffer_dirty: trace it (block_dirty_buffer),
// set BH_Dirty and, on a clean→dirty transition, dirty the folio and tag it in
// the index. Marking a buffer that is
// not uptodate only warns, as the kernel's WARN_ON_ONCE does (EvWarning); the
// buffer is still dirtied. A nil bh only warns. The caller holds a reference.
func MarkBufferDirty(cpu *CPU, bh *BufferHead) {
	if bh == nil { // the kernel would oops; the model warns, as for its other misuses
		cpu.count(EvWarning)
		return
	}
	if !bh.Has(BHUptodate) {
		cpu.count(EvWarning)
	}
	d := bh.bdev.Load()
	if d != nil {
		if t := d.tracing(); t != nil {
			d.emit(t, cpu, TraceEvent{Kind: TraceBufferDirty, Index: bh.BlockNr(), Pages: uint64(bh.size)})
		}
	}
	if bh.state.TestAndSet(BHDirty) {
		return
	}
	cpu.count(EvMarkDirty)
	if m := bh.folio.mapping.Load(); m != nil {
		m.setDirty(cpu, bh.folio)
	} else {
		bh.folio.flags.Set(FolioDirty) // an orphaned folio: no index to tag
	}
	if d != nil {
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
	cpu.count(EvBHBit) // test_clear_buffer_dirty
	if !bh.state.TestAndClear(BHDirty) {
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
	submitBH(cpu, blk.OpWrite, syncWriteFlags, bh)
	waitOnBuffer(cpu, bh)
	if !bh.Has(BHUptodate) {
		return fmt.Errorf("%w: write of block %d (size %d) on %s", ErrIO, bh.BlockNr(), bh.size, d.Name())
	}
	return nil
}
