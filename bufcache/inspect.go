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

// LRUEntries returns a copy of CPU cpu's bh LRU slots, most recent first
// (nil when the LRU is removed): a view for explanations; it allocates.
// Precondition: 0 <= cpu < NumCPU(). O(LRU size).
func (m *Machine) LRUEntries(cpu int) []*BufferHead {
	if m.lru == nil {
		return nil
	}
	return m.lru.Entries(cpu)
}
