package bufcache

import "github.com/bhsim/bhsim/internal/pageindex"

// PeekFolio returns the folio of the page cache that holds byte pos of the
// device, or nil, without counting events or taking a reference: a view for
// explanations and step-by-step output (package workload's step mode), not a
// model of any kernel lookup. The folio may be freed as soon as another
// goroutine drives the device; call it only while no CPU is being driven.
// O(index height).
func (d *BlockDevice) PeekFolio(pos uint64) *Folio {
	f, _ := d.mapping.index.Load(pos >> d.m.pageShift)
	return f
}

// NrDirty returns the number of the device's folios marked dirty in the
// page-cache index (PAGECACHE_TAG_DIRTY). Call it only while no CPU is
// being driven. O(dirty folios) at most.
func (d *BlockDevice) NrDirty() int { return d.mapping.index.CountMarked(pageindex.MarkDirty) }

// DirtyPages returns the pages of the device's dirty folios: its share of
// NR_FILE_DIRTY, which balance_dirty_pages counts as reclaimable. A folio
// whose dirty bit writeback has cleared is no longer counted, though it
// keeps its tag until its writeback starts. O(1), safe while CPUs are
// driven.
func (d *BlockDevice) DirtyPages() int64 { return d.mapping.dirtyPages.Load() }

// WritebackPages returns the pages of the device's folios under writeback
// (NR_WRITEBACK): set when a folio's writeback starts, cleared when its
// last buffer's write completes. O(1), safe while CPUs are driven.
func (d *BlockDevice) WritebackPages() int64 { return d.mapping.writebackPages.Load() }

// DirtiedPages returns the pages that have become dirty on the device since
// it was added (WB_DIRTIED): a count that never goes down, whose rate the
// kernel sets beside the writeback rate to throttle writers. O(1), safe
// while CPUs are driven.
func (d *BlockDevice) DirtiedPages() int64 { return d.mapping.dirtiedPages.Load() }

// WrittenPages returns the pages whose writeback has ended on the device
// since it was added (WB_WRITTEN, counted per folio as
// __folio_end_writeback counts it): a count that never goes down. In the
// model a folio's writeback ends when its last buffer's request is
// dispatched; a clock places that completion in time. O(1), safe while
// CPUs are driven.
func (d *BlockDevice) WrittenPages() int64 { return d.mapping.writtenPages.Load() }

// LRUEntries returns a copy of CPU cpu's bh LRU slots, most recent first
// (nil when the LRU is removed): a view for explanations; it allocates.
// Precondition: 0 <= cpu < NumCPU(). O(LRU size).
func (m *Machine) LRUEntries(cpu int) []*BufferHead {
	if m.lru == nil {
		return nil
	}
	return m.lru.Entries(cpu)
}
