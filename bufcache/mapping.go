package bufcache

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/internal/conc"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// Mapping models the block device inode's struct address_space: the page-cache
// index of its folios and private_lock, which guards the buffer rings attached
// to them.
//
// The index's writer lock plays xa_lock. Every change of a folio's dirty or
// writeback flag that goes with a change of its tag is made inside the index
// (pageindex.Index.UpdateMarks), in one critical section with the tag change
// and only if the folio is still the one stored at its index, so a folio
// removed and replaced at the same index never leaves its tag behind, nor
// gets the newcomer's. Every reader of tags (the writeback walks, Check)
// takes that lock too, and so sees a folio's flag and tag change as one step.
// The invariants that keep sync from missing data follow:
//   - a folio in the page cache with PG_dirty carries the dirty tag: setDirty
//     sets both at once, and the only ones who clear the tag without the flag
//     (setWriteback) look at the flag in the same critical section;
//   - a folio whose dirty bit writeback cleared for I/O keeps its dirty tag
//     until setWriteback swaps it for the writeback tag in one step, so a
//     concurrent sync finds it under one tag or the other;
//   - PG_writeback and the writeback tag agree: both are set, and cleared,
//     together.
type Mapping struct {
	dev   *BlockDevice
	index pageindex.Index[Folio]
	// privateLock is mapping->private_lock (i_private_lock from 6.8): it excludes
	// ring lookups (__find_get_block_slow) from attach and detach.
	privateLock conc.SpinLock
	// large is mapping_large_folio_support (FoliosLarge); maxOrder is
	// mapping_max_folio_order, MAX_PAGECACHE_ORDER then, and 0 without it.
	large    bool
	maxOrder uint8
	// minOrder is mapping_min_folio_order: get_order(block size), set by
	// set_init_blocksize and set_blocksize (v6.15+); always 0 without large
	// folios.
	minOrder atomic.Uint32
	// nrpages is mapping->nrpages on a mapping with large folios: the pages
	// of every folio in the index. Without them it is the index's length,
	// and not kept (one locked instruction less per folio added or removed).
	nrpages atomic.Int64
	// wbErr is mapping->wb_err, the errseq_t writeback errors are recorded in
	// and every open file samples (v4.13+).
	wbErr errseq
	// invalidateLock is mapping->invalidate_lock (v5.15+): readahead and
	// filemap_create_folio hold it shared while they add folios, and
	// set_blocksize (v6.15+) exclusively while it changes the minimum folio
	// order, so that no folio of the old order is added after its truncation.
	invalidateLock sync.RWMutex
	// wbIndex is mapping->writeback_index: where the next range-cyclic
	// (background) writeback starts, the index after the last folio the
	// previous one wrote.
	wbIndex atomic.Uint64
	// dirtyPages and writebackPages are the pages of the folios in the
	// index with PG_dirty and with PG_writeback: the device's share of
	// NR_FILE_DIRTY (its wb's WB_RECLAIMABLE) and NR_WRITEBACK
	// (WB_WRITEBACK), which balance_dirty_pages weighs. dirtiedPages counts
	// every page that became dirty (WB_DIRTIED), writtenPages every page
	// whose writeback ended (WB_WRITTEN), neither going down. Each
	// changes in the index critical section that changes the flag
	// (folio_account_dirtied, folio_clear_dirty_for_io,
	// __folio_start_writeback, __folio_end_writeback); the mark steps below
	// are bound to the mapping once (bindMarkSteps), so that they reach
	// these counters without allocating.
	dirtyPages, writebackPages, dirtiedPages, writtenPages                  atomic.Int64
	markDirtyStep, cancelDirtyStep, startWritebackStep, finishWritebackStep func(*Folio, pageindex.Marks) pageindex.Marks
}

// bindMarkSteps binds the flag-and-tag steps that account pages to m.
func (m *Mapping) bindMarkSteps() {
	m.markDirtyStep, m.cancelDirtyStep = m.markDirty, m.cancelDirtyTag
	m.startWritebackStep, m.finishWritebackStep = m.startWriteback, m.finishWriteback
}

// pages returns mapping->nrpages.
func (m *Mapping) pages() int64 {
	if m.large {
		return m.nrpages.Load()
	}
	return int64(m.index.Len())
}

// minFolioOrder returns mapping_min_folio_order.
func (m *Mapping) minFolioOrder() uint8 { return uint8(m.minOrder.Load()) }

// fgp flags select what filemapGetFolio does (FGP_*).
type fgp uint8

const (
	fgpAccessed fgp = 1 << iota // FGP_ACCESSED: folio_mark_accessed on the result
	fgpLock                     // FGP_LOCK: return the folio locked
	fgpCreat                    // FGP_CREAT: create the folio when absent
)

// lookup models filemap_get_entry: a lock-free index load, a speculative
// reference (folio_try_get) and a re-check that the folio is still the page
// cache's at that index. The kernel re-reads the slot (xas_reload); the model
// checks the folio's mapping and range instead, which is equivalent because
// addFolio publishes a folio's mapping only once the folio is in the index: a
// recycled frame that lost its insertion race never shows this mapping. It
// returns a referenced folio, the one that spans index (a large folio's
// first index may be below it), or nil.
func (m *Mapping) lookup(cpu *CPU, index uint64) *Folio {
	for {
		cpu.count(EvIndexLookup)
		f, levels := m.index.Load(index)
		cpu.countN(EvIndexLevel, levels)
		if f == nil {
			return nil
		}
		if !f.tryGet(cpu) {
			continue // being freed: look again
		}
		if f.mapping.Load() == m && f.covers(index) {
			return f
		}
		f.put(cpu) // reused or removed under us: look again
	}
}

// getFolio models __filemap_get_folio (pagecache_get_page before 6.x) with the
// given FGP flags and no order of its own (the mapping's minimum). It returns
// a referenced folio spanning index, locked with fgpLock, or nil if absent
// and fgpCreat is not set. Creating never fails.
func (m *Mapping) getFolio(cpu *CPU, index uint64, flags fgp) *Folio {
	return m.getFolioOrder(cpu, index, flags, 0)
}

// getFolioOrder is __filemap_get_folio with fgf_set_order(order) (v6.x): on a
// miss with fgpCreat it creates a folio of the largest order it can, as the
// kernel does: at least the mapping's minimum, at most its maximum (0 on a
// mapping without large folios), at the index aligned down to the minimum
// order and no larger than that index's alignment allows; if the range is
// partly cached, smaller orders down to the minimum are tried, and at the
// minimum the lookup starts again.
func (m *Mapping) getFolioOrder(cpu *CPU, index uint64, flags fgp, order uint8) *Folio {
	for {
		f := m.lookup(cpu, index)
		if f == nil {
			if flags&fgpCreat == 0 {
				return nil
			}
			if f = m.createFolio(cpu, index, flags, order); f == nil {
				continue // lost a race to insert: look again
			}
			return f
		}
		if flags&fgpLock != 0 {
			f.lockFolio(cpu)
			if f.mapping.Load() != m {
				f.unlockFolio() // truncated while we waited
				f.put(cpu)
				continue
			}
		}
		if flags&fgpAccessed != 0 {
			f.markAccessed(cpu)
		}
		return f
	}
}

// createFolio is __filemap_get_folio's FGP_CREAT branch for index, wanting
// order: it returns the new folio, which spans index, or nil if every order
// it tried found the range (partly) cached.
func (m *Mapping) createFolio(cpu *CPU, index uint64, flags fgp, order uint8) *Folio {
	minOrder := m.minFolioOrder()
	order = min(max(order, minOrder), m.maxOrder)
	index &^= 1<<minOrder - 1 // mapping_align_index
	if index&(1<<order-1) != 0 {
		order = uint8(bits.TrailingZeros64(index)) // not aligned: a smaller folio
	}
	for {
		if f := m.addFolio(cpu, index, order, flags); f != nil || order <= minOrder {
			return f
		}
		order--
	}
}

// addFolio creates a folio of the given order at index (a multiple of
// 1 << order) and inserts it, locked if fgpLock (the kernel inserts new
// folios locked) and with PG_referenced if fgpAccessed: filemap_alloc_folio +
// filemap_add_folio, traced as mm_filemap_add_to_page_cache. It returns the
// folio with the caller's reference (the page cache holds another), or nil if
// another folio holds a page of the range.
func (m *Mapping) addFolio(cpu *CPU, index uint64, order uint8, flags fgp) *Folio {
	mc := m.dev.m
	if limit := mc.cfg.PageCacheLimit; limit > 0 && int(mc.cached.Load()) >= limit {
		mc.reclaimFor(cpu)
	}
	f := cpu.allocFolio(!m.dev.metaOnly, order)
	f.index = index
	f.ref.Store(2) // the caller's and the page cache's
	// Nobody uses the folio before its mapping is set below (a stale lock-free
	// reader re-checks the mapping), so its flags are set in one store, as the
	// kernel sets a new folio's with __folio_set_locked and
	// __folio_set_referenced. The mapping is set once the folio is in the
	// index (the kernel sets it first and has readers re-read the slot; see
	// lookup), so a folio that loses its insertion race is never seen as this
	// mapping's, locked or not.
	var fl FolioFlag
	if flags&fgpAccessed != 0 {
		fl |= FolioReferenced
	}
	if flags&fgpLock != 0 {
		cpu.count(EvFolioLock)
		fl |= FolioLocked
	}
	f.flags.Store(fl)
	if !m.index.InsertOrder(index, order, f) {
		if flags&fgpLock != 0 {
			f.unlockFolio()
		}
		// Never published, but a lock-free reader holding a stale pointer
		// to this recycled frame may have taken a reference since the
		// count became 2: drop only ours (the page cache's and the
		// caller's), as filemap_add_folio's error path and its caller's
		// folio_put do; the last put frees the frame.
		f.ref.Add(-1)
		f.put(cpu)
		return nil
	}
	f.mapping.Store(m, m.dev.m.cfg.OneGoroutine)
	cpu.count(EvIndexInsert)
	pages := int64(1) << order
	if m.large {
		m.nrpages.Add(pages)
	}
	mc.cached.Add(pages)
	if mc.cfg.PageCacheLimit > 0 {
		mc.folios.push(f)
	}
	if t := m.dev.tracing(); t != nil {
		m.dev.emit(t, cpu, TraceEvent{Kind: TraceFolioAdd, Index: index, Order: order, Pages: uint64(pages)})
	}
	return f
}

// setDirty marks a folio dirty and, on a clean→dirty transition of a folio
// still in this mapping, tags it in the index and traces it
// (writeback_dirty_folio): __folio_mark_dirty, which
// re-checks folio->mapping under xa_lock (the check here is that the index
// still holds the folio). The flag is set inside the critical section that
// sets the tag, so whoever sees the folio dirty, as mark_buffer_dirty's
// folio_test_set_dirty does without a lock, and then looks for dirty tags
// (which takes that lock) finds it tagged: a folio found dirty needs nothing
// more. A folio no longer in the page cache only gets the flag.
func (m *Mapping) setDirty(cpu *CPU, f *Folio) {
	if f.Has(FolioDirty) {
		return
	}
	cpu.count(EvFolioDirty)
	if !m.index.UpdateMarks(f.index, f, m.markDirtyStep) {
		f.flags.Set(FolioDirty)
		return
	}
	if t := m.dev.tracing(); t != nil {
		m.dev.emit(t, cpu, TraceEvent{Kind: TraceFolioDirty, Index: f.index, Order: f.order, Pages: f.NrPages()})
	}
}

// markDirty is setDirty's step under the index lock: PG_dirty and the dirty
// tag, and a folio that was clean accounted dirty (folio_account_dirtied).
func (m *Mapping) markDirty(f *Folio, marks pageindex.Marks) pageindex.Marks {
	if !f.flags.TestAndSet(FolioDirty) {
		n := int64(f.NrPages())
		m.dirtyPages.Add(n)
		m.dirtiedPages.Add(n)
	}
	return marks | pageindex.MarkDirty.Bit()
}

// cancelDirty models folio_cancel_dirty for a folio whose buffers are being
// dropped: if it is dirty (tested first, without the lock, as the kernel
// does), its dirty bit and, in the same index critical section, its tag are
// cleared. (Writeback clears only the bit, folio_clear_dirty_for_io, and the
// tag when writeback starts: setWriteback.)
func (m *Mapping) cancelDirty(f *Folio) {
	if !f.Has(FolioDirty) {
		return
	}
	if !m.index.UpdateMarks(f.index, f, m.cancelDirtyStep) {
		f.flags.Clear(FolioDirty)
	}
}

// cancelDirtyTag is cancelDirty's step under the index lock: the tag goes
// with the bit, if the bit was still set.
func (m *Mapping) cancelDirtyTag(f *Folio, marks pageindex.Marks) pageindex.Marks {
	if f.flags.TestAndClear(FolioDirty) {
		marks &^= pageindex.MarkDirty.Bit()
		m.dirtyPages.Add(-int64(f.NrPages()))
	}
	return marks
}

// clearDirtyForIO models folio_clear_dirty_for_io for a locked folio of
// this mapping: it reports whether the folio was dirty, and a dirty one
// leaves the dirty pages (its tag stays until writeback starts).
func (m *Mapping) clearDirtyForIO(f *Folio) bool {
	if !f.flags.TestAndClear(FolioDirty) {
		return false
	}
	m.dirtyPages.Add(-int64(f.NrPages()))
	return true
}

// remove models filemap_remove_folio for a locked folio: take it out of the
// index (its tags go with it, as page_cache_delete's xas_init_marks clears
// them), clear its stale dirty bit and mapping, and drop the page cache's
// reference. A setDirty racing with it either tags the folio before the
// deletion, which removes the tag, or finds the folio gone and only sets the
// flag of what is now an orphan: no tag is left behind.
func (m *Mapping) remove(cpu *CPU, f *Folio) {
	if m.unlink(cpu, f) {
		f.put(cpu)
	}
}

// unlink is remove without the put, for a caller that owns the page cache's
// reference (reclaim, which froze the count): page_cache_delete. It reports
// whether f was in the index.
func (m *Mapping) unlink(cpu *CPU, f *Folio) bool {
	if !m.index.Delete(f.index, f) {
		return false
	}
	// The folio leaves the mapping's accounting with its flags: its stale
	// dirty bit is cleared, and a writeback that ends later ends for an
	// orphan.
	if f.flags.TestAndClear(FolioDirty) {
		m.dirtyPages.Add(-int64(f.NrPages()))
	}
	if f.Has(FolioWriteback) {
		m.writebackPages.Add(-int64(f.NrPages()))
	}
	f.mapping.Store(nil, m.dev.m.cfg.OneGoroutine)
	cpu.count(EvIndexDelete)
	pages := int64(1) << f.order
	if m.large {
		m.nrpages.Add(-pages)
	}
	m.dev.m.cached.Add(-pages)
	if t := m.dev.tracing(); t != nil {
		m.dev.emit(t, cpu, TraceEvent{Kind: TraceFolioRemove, Index: f.index, Order: f.order, Pages: uint64(pages)})
	}
	return true
}
