package bufcache

import (
	"fmt"
	"runtime"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// syncMode is writeback_control's sync_mode.
type syncMode uint8

const (
	wbSyncNone syncMode = iota // background writeback: skip what is busy
	wbSyncAll                  // data integrity: wait for locks and earlier writeback
)

// writepages models blkdev_writepages (generic_writepages over write_cache_pages
// in 5.10; writeback_iter + block_write_full_folio in 6.x): inside a block plug,
// for every folio tagged dirty, in index order, lock it, clear its dirty bit for
// I/O (folio_clear_dirty_for_io) and write it (block_write_full_folio). The
// tagged folios are looked up a batch at a time (a folio_batch filled by
// filemap_get_folios_tag), each batch a snapshot. A folio dirtied before the
// walk passes its index is in a batch, since it was tagged when it became
// dirty; one cleared for I/O by another writer and not yet under writeback
// still carries its dirty tag (setWriteback swaps the two tags in one step).
// The plug is finished at the end, which dispatches the merged requests.
func (d *BlockDevice) writepages(cpu *CPU, mode syncMode) {
	d.writeDirty(cpu, wbControl{mode: mode, wait: true})
}

// reclaimWriteback is the writeback a reclaim pass starts when it met dirty
// folios of d: background writeback, as the flusher the kernel's reclaim
// wakes (wakeup_flusher_threads) would do it. The model runs it in the
// allocating goroutine, which may hold a folio lock of its own (write_begin's,
// while a get_block allocates), so it skips a folio it cannot lock at once
// instead of waiting for it, as shrink_folio_list's folio_trylock does.
func (d *BlockDevice) reclaimWriteback(cpu *CPU) { d.writeDirty(cpu, wbControl{mode: wbSyncNone}) }

// wbControl is what of writeback_control writeDirty looks at.
type wbControl struct {
	mode syncMode
	// wait makes writeDirty wait for a folio's lock; without it a folio
	// locked by someone else is skipped.
	wait bool
	// nrToWrite is nr_to_write: stop once that many pages were written (0:
	// no limit).
	nrToWrite int
	// cyclic is range_cyclic: start at the mapping's writeback_index and
	// leave there the index after the last folio written if nr_to_write ran
	// out, or 0 if the pass reached the end (write_cache_pages since v4.20
	// does not wrap around within a call; the next one starts at 0).
	cyclic bool
}

// writeDirty is writepages under wbc; it returns the pages it wrote.
func (d *BlockDevice) writeDirty(cpu *CPU, wbc wbControl) int {
	m := &d.mapping
	first := uint64(0)
	if wbc.cyclic {
		first = m.wbIndex.Load()
	}
	written, done := 0, false
	next := uint64(0) // writeback_index for a cyclic pass that stops early
	cpu.plug.Start()
	for start := first; !done; {
		batch := m.index.FindMarked(start, pageindex.MarkDirty)
		touchFolios(batch.Items[:batch.N], d.m.cfg.OneGoroutine)
		for _, f := range batch.Items[:batch.N] {
			if done {
				break
			}
			if !f.tryGet(cpu) {
				continue // being freed
			}
			if f.mapping.Load() != m {
				// The batch holds no references: the frame may have been
				// freed and taken by a folio not yet in the page cache,
				// whose flags its creator is still writing. The kernel's
				// batch lookup re-checks the slot after folio_try_get
				// (xas_reload) for the same reason; locking first would
				// race with the new owner's lock.
				f.put(cpu)
				continue
			}
			switch {
			case wbc.wait:
				f.lockFolio(cpu)
			case f.tryLockFolio():
				cpu.count(EvFolioLock)
			default:
				f.put(cpu) // busy: its holder writes it, or a later pass does
				continue
			}
			if f.mapping.Load() == m {
				if f.Has(FolioWriteback) && wbc.mode == wbSyncAll {
					waitOnWriteback(cpu, f)
				}
				if !f.Has(FolioWriteback) && m.clearDirtyForIO(f) {
					written += int(f.NrPages())
					next = f.index + f.NrPages()
					done = wbc.nrToWrite > 0 && written >= wbc.nrToWrite
					d.writeFolio(cpu, f, wbc.mode) // unlocks f
				} else {
					f.unlockFolio()
				}
			} else {
				f.unlockFolio()
			}
			f.put(cpu)
		}
		if batch.Done {
			break
		}
		start = batch.Next
	}
	cpu.plug.Finish()
	if wbc.cyclic {
		if !done {
			next = 0 // it reached the end: the next pass starts over
		}
		m.wbIndex.Store(next)
	}
	return written
}

// writeFolio models __block_write_full_folio (__block_write_full_page in 5.10)
// for a locked folio, of any order, whose dirty bit was just cleared for I/O:
// buffers past the end of the device are cleaned, unmapped dirty buffers
// mapped; every dirty mapped buffer is locked, marked Async_Write and
// submitted as its own bio (one bio per buffer, whatever the folio's size,
// REQ_SYNC for data-integrity writeback); the folio is under writeback until
// the last completes. It unlocks the folio.
func (d *BlockDevice) writeFolio(cpu *CPU, f *Folio, mode syncMode) {
	cpu.count(EvWritepage)
	head := f.private
	if head == nil { // only buffers dirty a folio here, and a dirty one keeps them
		f.unlockFolio()
		return
	}
	size := head.size
	first := uint64(blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}.FirstBlock(blocksize.PageIndex(f.index)))
	last := (d.size - 1) / uint64(size)
	block := first
	for bh := range head.ring(cpu) { // pass 1: past the end, or not yet mapped
		if block > last {
			bh.clearBit(cpu, BHDirty)
			bh.setBit(cpu, BHUptodate)
		} else if bh.Has(BHDirty) && !bh.Has(BHMapped) {
			d.getBlock(cpu, bh, block)
			bh.clearBit(cpu, BHDelay)
		}
		block++
	}
	for bh := range head.ring(cpu) { // pass 2: lock and mark what will be written
		if !bh.Has(BHMapped) {
			continue
		}
		if mode == wbSyncAll {
			LockBuffer(cpu, bh)
		} else if !tryLockBuffer(cpu, bh) {
			d.mapping.setDirty(cpu, f) // redirty_page_for_writepage
			continue
		}
		// test_clear_buffer_dirty, then mark_buffer_async_write
		cpu.count(EvBHBit)
		if bh.state.TestAndClearSet(BHDirty, BHAsyncWrite) {
			cpu.count(EvBHBit)
			bh.endIO = endAsyncWrite
		} else {
			UnlockBuffer(cpu, bh)
		}
	}
	d.setWriteback(f)
	// Collect first: a plug flush inside a submission may complete buffers of
	// this folio, and the ring must still show the others as Async_Write.
	async := cpu.scratch[:0]
	for bh := range head.ring(cpu) {
		if bh.Has(BHAsyncWrite) {
			async = append(async, bh)
		}
	}
	flags := writebackFlags(mode)
	for _, bh := range async {
		submitBH(cpu, blk.OpWrite, flags, bh)
	}
	f.unlockFolio()
	if len(async) == 0 {
		d.endWriteback(f)
	}
	clear(async)
	cpu.scratch = async[:0]
}

// setWriteback models __folio_start_writeback: in one index critical section
// (xa_lock), PG_writeback and its tag are set and, if the folio is no longer
// dirty, its dirty tag is cleared — the two tags change together, so a
// concurrent sync always finds the folio under one of them, and a setDirty
// racing with it either comes first (the folio is dirty: its tag stays) or
// after (it tags the folio again). The caller holds the folio lock, so the
// folio is still in the page cache; the fallback only sets the flag.
func (d *BlockDevice) setWriteback(f *Folio) {
	if !d.mapping.index.UpdateMarks(f.index, f, d.mapping.startWritebackStep) {
		f.flags.Set(FolioWriteback)
	}
}

// startWriteback is setWriteback's step under the index lock; the folio's
// pages are accounted under writeback.
func (m *Mapping) startWriteback(f *Folio, marks pageindex.Marks) pageindex.Marks {
	if f.flags.TestAndSet(FolioWriteback) {
		return marks
	}
	m.writebackPages.Add(int64(f.NrPages()))
	marks |= pageindex.MarkWriteback.Bit()
	if !f.Has(FolioDirty) {
		marks &^= pageindex.MarkDirty.Bit()
	}
	return marks
}

// endWriteback models folio_end_writeback (__folio_end_writeback): PG_writeback
// and its tag are cleared in one index critical section, so they never
// disagree. A folio that left the page cache only loses the flag.
func (d *BlockDevice) endWriteback(f *Folio) {
	if !d.mapping.index.UpdateMarks(f.index, f, d.mapping.finishWritebackStep) {
		f.flags.Clear(FolioWriteback)
	}
}

// finishWriteback is endWriteback's step under the index lock; the folio's
// pages leave the writeback pages.
func (m *Mapping) finishWriteback(f *Folio, marks pageindex.Marks) pageindex.Marks {
	if f.flags.TestAndClear(FolioWriteback) {
		marks &^= pageindex.MarkWriteback.Bit()
		m.writebackPages.Add(-int64(f.NrPages()))
		m.writtenPages.Add(int64(f.NrPages()))
	}
	return marks
}

// waitOnWriteback models folio_wait_writeback; it flushes the CPU's plug
// first (the writeback may sit in it), as io_schedule does.
func waitOnWriteback(cpu *CPU, f *Folio) {
	if !f.Has(FolioWriteback) {
		return
	}
	cpu.plug.Wait()
	for f.Has(FolioWriteback) {
		runtime.Gosched()
	}
}

// endBufferAsyncWrite models end_buffer_async_write: on success the buffer is
// uptodate; on failure it gets BH_Write_EIO, loses BH_Uptodate, and the error
// is recorded for the device's next sync ("lost async page write"). Then the
// buffer is unlocked, and the last Async_Write buffer of the folio ends the
// folio's writeback. All buffers of a folio complete on the CPU that submitted
// them, so the ring scan needs no b_uptodate_lock here.
func endBufferAsyncWrite(cpu *CPU, bh *BufferHead, ok bool) {
	f := bh.folio
	if ok { // set_buffer_uptodate, clear_buffer_async_write, unlock_buffer
		old := bh.state.Change(BHUptodate, BHAsyncWrite|BHLock)
		if old&BHLock == 0 {
			cpu.count(EvWarning) // UnlockBuffer's check
		}
		if cpu.m.cfg.BitOps.setWrites(old&BHUptodate != 0) {
			cpu.count(EvBHBit) // set_buffer_uptodate
		}
		cpu.count(EvBHBit) // clear_buffer_async_write
	} else {
		cpu.count(EvWarning)
		markWriteIOError(cpu, bh)
		f.flags.Set(FolioError)
		bh.clearBit(cpu, BHAsyncWrite)
		UnlockBuffer(cpu, bh)
	}
	// The other buffers, from bh's successor: a walk that gets back to bh
	// found none still under async write.
	if bh.thisPage.find(nil, func(b *BufferHead) bool { return b == bh || b.Has(BHAsyncWrite) }) != bh {
		return
	}
	if m := f.mapping.Load(); m != nil {
		m.dev.endWriteback(f)
	} else {
		f.flags.Clear(FolioWriteback)
	}
}

// tryLockBuffer models trylock_buffer.
func tryLockBuffer(cpu *CPU, bh *BufferHead) bool {
	if bh.state.TestAndSet(BHLock) {
		return false
	}
	cpu.count(EvBHLock)
	return true
}

// SyncBlockdev models sync_blockdev (filemap_write_and_wait): write back every
// dirty folio of the device (writepages with WB_SYNC_ALL), wait until no folio
// is under writeback, and report a write error that happened since the last
// sync, once: the 5.x test-and-clear of AS_EIO (filemap_check_errors), not a
// per-opener errseq. It returns nil or an error wrapping ErrIO.
func (d *BlockDevice) SyncBlockdev(cpu *CPU) error {
	d.writeAndWait(cpu, wbSyncAll)
	if n := d.wbErr.Load(); n != d.wbErrSeen.Swap(n) {
		return fmt.Errorf("%w: lost async page write on %s", ErrIO, d.Name())
	}
	return nil
}

// writeAndWait writes back the dirty folios of the device (every one with
// wbSyncAll; with wbSyncNone, buffers someone holds locked are left dirty)
// and waits until no folio is under writeback, leaving any write error for
// the next sync to report: filemap_fdatawrite + filemap_fdatawait_keep_errors.
func (d *BlockDevice) writeAndWait(cpu *CPU, mode syncMode) {
	d.writepages(cpu, mode)
	m := &d.mapping
	for start := uint64(0); ; { // filemap_fdatawait: batches of writeback-tagged folios
		batch := m.index.FindMarked(start, pageindex.MarkWriteback)
		for _, f := range batch.Items[:batch.N] {
			if f.tryGet(cpu) {
				if f.mapping.Load() == m {
					waitOnWriteback(cpu, f)
				}
				f.put(cpu)
			}
		}
		if batch.Done {
			break
		}
		start = batch.Next
	}
	d.debugCheck()
}

// minWritebackPages is MIN_WRITEBACK_PAGES: 4 MiB of 4 KiB pages, the least
// a background writeback pass writes of an inode before it looks again.
const minWritebackPages = 1024

// backgroundChunk is writeback_chunk_size for background writeback with
// Config.DirtyLimit as the background threshold: the hard limit's
// (dirty_ratio's default, twice dirty_background_ratio's) DIRTY_SCOPE-th
// part, rounded down to whole MIN_WRITEBACK_PAGES after one is added. (The
// kernel also caps it at half the device's measured write bandwidth a
// second, which for a disk of a few hundred MB/s is larger.)
func backgroundChunk(limit int) int {
	const dirtyScope = 8
	return (2*limit/dirtyScope + minWritebackPages) / minWritebackPages * minWritebackPages
}

// WriteBackground is one pass of background writeback over the device, as
// the flusher makes it (wb_writeback's for_background work:
// writeback_sb_inodes → do_writepages with WB_SYNC_NONE and range_cyclic,
// nr_to_write pages): on cpu, the flusher's, from the mapping's
// writeback_index on, at most pages pages (0: every dirty folio), skipping
// folios already under writeback. It returns the pages it wrote. The
// caller decides when the flusher runs and how much it writes (a clock
// driving DirtyThrottle: OverBackground, ChunkPages). Its costs are
// counted on cpu.
func (d *BlockDevice) WriteBackground(cpu *CPU, pages int) int {
	return d.writeDirty(cpu, wbControl{mode: wbSyncNone, wait: true, nrToWrite: pages, cyclic: true})
}

// DirtyBalancer is the machine's balance_dirty_pages
// (Config.Balancer): the write paths call it where the kernel calls
// balance_dirty_pages_ratelimited, after each folio a write(2) dirtied,
// with the writing CPU and the device. An implementation keeps time — it
// weighs the device's DirtyPages and WritebackPages at the writer's
// moment, puts the writer to sleep and lets the flusher write back
// (WriteBackground on the flusher's CPU, from the writer's goroutine) —
// which the model itself does not: package bench/engine's clock does,
// with DirtyThrottle's control law.
type DirtyBalancer interface {
	BalanceDirtyPages(cpu *CPU, d *BlockDevice)
}

// balanceDirtyPages is balance_dirty_pages_ratelimited: the machine's
// Balancer, if it has one; otherwise a simplified stand-in: when the
// device holds more dirty folios than Config.DirtyLimit (the background
// threshold), the writer starts background writeback of the device (the
// kernel wakes the flusher and throttles the writer; here the work is done
// on Config.Flusher's CPU by the writer's goroutine, so that its events
// are the flusher's). Background writeback is wb_writeback's
// for_background loop: a range-cyclic pass of backgroundChunk pages at a
// time while the device is over the threshold (wb_over_bg_thresh), so
// that it leaves about the threshold dirty, not nothing. The stand-in has
// no clock: a writer faster than the flusher, which the kernel throttles
// at a setpoint above the threshold, leaves only the threshold dirty here.
func (d *BlockDevice) balanceDirtyPages(cpu *CPU) {
	if b := d.m.cfg.Balancer; b != nil {
		b.BalanceDirtyPages(cpu, d)
		return
	}
	limit := d.m.cfg.DirtyLimit
	if limit <= 0 || d.NrDirty() <= limit {
		return
	}
	wb := cpu
	if d.m.cfg.SeparateFlusher {
		d.m.flusherMu.Lock() // one writer at a time drives the flusher's CPU
		defer d.m.flusherMu.Unlock()
		wb = d.m.cpus[d.m.cfg.FlusherCPU]
	}
	for d.NrDirty() > limit {
		if d.WriteBackground(wb, backgroundChunk(limit)) == 0 {
			return // what is dirty is busy
		}
	}
}
