package bufcache

import (
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/internal/spin"
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
	privateLock spin.Lock
}

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
// checks the folio's mapping and index instead, which is equivalent because
// addFolio publishes a folio's mapping only once the folio is in the index: a
// recycled frame that lost its insertion race never shows this mapping. It
// returns a referenced folio or nil.
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
		if f.mapping.Load() == m && f.index == index {
			return f
		}
		f.put(cpu) // reused or removed under us: look again
	}
}

// getFolio models __filemap_get_folio (pagecache_get_page before 6.x) with the
// given FGP flags. It returns a referenced folio, locked with fgpLock, or nil if
// absent and fgpCreat is not set. Creating never fails.
func (m *Mapping) getFolio(cpu *CPU, index uint64, flags fgp) *Folio {
	for {
		f := m.lookup(cpu, index)
		if f == nil {
			if flags&fgpCreat == 0 {
				return nil
			}
			if f = m.addFolio(cpu, index, flags); f == nil {
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

// addFolio creates a folio at index and inserts it, locked if fgpLock (the
// kernel inserts new folios locked) and with PG_referenced if fgpAccessed:
// filemap_alloc_folio + filemap_add_folio. It returns the folio with the
// caller's reference (the page cache holds another), or nil if another folio got
// the slot first.
func (m *Mapping) addFolio(cpu *CPU, index uint64, flags fgp) *Folio {
	mc := m.dev.m
	if limit := mc.cfg.PageCacheLimit; limit > 0 && int(mc.cached.Load()) >= limit {
		mc.reclaim(cpu, reclaimBatch)
	}
	f := cpu.allocFolio(!m.dev.metaOnly)
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
	if !m.index.Insert(index, f) {
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
	f.mapping.Store(m)
	cpu.count(EvIndexInsert)
	mc.cached.Add(1)
	if mc.cfg.PageCacheLimit > 0 {
		mc.folios.push(f)
	}
	return f
}

// setDirty marks a folio dirty and, on a clean→dirty transition of a folio
// still in this mapping, tags it in the index: __folio_mark_dirty, which
// re-checks folio->mapping under xa_lock (the check here is that the index
// still holds the folio). The flag is set inside the critical section that
// sets the tag, so whoever sees the folio dirty, as mark_buffer_dirty's
// folio_test_set_dirty does without a lock, and then looks for dirty tags
// (which takes that lock) finds it tagged: a folio found dirty needs nothing
// more. A folio no longer in the page cache only gets the flag.
func (m *Mapping) setDirty(f *Folio) {
	if f.Has(FolioDirty) {
		return
	}
	if !m.index.UpdateMarks(f.index, f, markDirty) {
		f.flags.Set(FolioDirty)
	}
}

// markDirty is setDirty's step under the index lock: PG_dirty and the dirty
// tag.
func markDirty(f *Folio, marks pageindex.Marks) pageindex.Marks {
	f.flags.Set(FolioDirty)
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
	if !m.index.UpdateMarks(f.index, f, cancelDirtyTag) {
		f.flags.Clear(FolioDirty)
	}
}

// cancelDirtyTag is cancelDirty's step under the index lock: the tag goes
// with the bit, if the bit was still set.
func cancelDirtyTag(f *Folio, marks pageindex.Marks) pageindex.Marks {
	if f.flags.TestAndClear(FolioDirty) {
		marks &^= pageindex.MarkDirty.Bit()
	}
	return marks
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
	f.flags.Clear(FolioDirty)
	f.mapping.Store(nil)
	cpu.count(EvIndexDelete)
	m.dev.m.cached.Add(-1)
	return true
}
