package bufcache

import (
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/freelist"
)

// CPU is one simulated CPU. Every operation of the model runs on a CPU passed
// explicitly, and the CPU owns what the kernel keeps per CPU: the event counters,
// its slot of the bh LRU (held by the Machine), its block plug, and small caches
// of free buffer heads, folios and bios (the per-CPU parts of the slabs and of
// the page allocator).
//
// One goroutine at a time may drive a CPU: its counters are plain fields, so
// counting costs an increment and no synchronisation. Different goroutines may
// drive different CPUs concurrently.
//
// A CPU belongs to the Machine that made it: pass it only to that machine's
// devices, files and buffers. Another machine's CPU is a programming error
// the hot paths do not check (an operation then counts its events on the
// wrong machine, and may index past this machine's per-CPU LRU).
type CPU struct {
	id int
	m  *Machine
	ev Counters
	// moved has bit e set when kind e was counted since the last TakeMoved;
	// followed says its one follower has claimed it (Follow).
	moved    uint64
	followed bool

	bhFree freelist.List[BufferHead]
	// bhSlab and folioSlab carve new buffer heads and folios from arrays
	// (the slab's new pages) when the free lists are empty.
	bhSlab    freelist.Slab[BufferHead]
	folioSlab freelist.Slab[Folio]
	// bioFree holds the bios submit_bh built on this CPU once they completed
	// (the bio slab's per-CPU part).
	bioFree freelist.List[bhBio]
	// plug is this CPU's block plug (current->plug of the task running here).
	plug blk.Plug
	// scratch is reused by writeback and by block_read_full_folio to list a
	// folio's buffers without allocating.
	scratch []*BufferHead
	// raScratch is reused by readahead batches to collect a run of folios.
	raScratch []*Folio
	// raBatch is the readahead batch (read_pages).
	raBatch readBatch
	// flushBio is the empty preflush bio of blkdev_issue_flush, reused.
	flushBio blk.Bio
	// folioFree holds freed frames, one list per folio order, each bounded
	// to folioCacheMax pages.
	folioFree [16]freelist.List[Folio] // by order; 16 > maxFolioOrder, a power of two (no bounds check)
}

// bhCacheMax bounds a CPU's free buffer_head cache; beyond it freed buffer heads
// are left to the garbage collector.
const bhCacheMax = 4096

// ID returns the CPU number.
func (c *CPU) ID() int { return c.id }

// Machine returns the machine c belongs to.
func (c *CPU) Machine() *Machine { return c.m }

// Events returns a snapshot of c's counters. Call it from the goroutine driving
// c, or while none does.
func (c *CPU) Events() Counters { return c.ev }

// Event returns c's count of events of kind e (e < NumEvents) without
// copying the others, as a caller comparing counts kind by kind wants. The
// same caveat as Events': from the goroutine driving c, or while none does.
func (c *CPU) Event(e Event) uint64 { return c.ev[e] }

// Moved returns the kinds of event counted on c since the last TakeMoved,
// as a set: bit e for kind e (every kind whose count changed, and perhaps
// one counted by zero). A follower of the counters (one that prices
// what moved after each operation) reads only these kinds instead of all
// NumEvents. The same caveat as Events'. O(1).
func (c *CPU) Moved() uint64 { return c.moved }

// TakeMoved returns Moved and empties it. It is for one follower of c's
// counters (Follow): a second follower would no longer see what the first
// took. O(1).
func (c *CPU) TakeMoved() uint64 {
	m := c.moved
	c.moved = 0
	return m
}

// Follow claims c's counters for one follower, the caller of TakeMoved,
// and empties Moved: it reports false, and changes nothing, when another
// follower has claimed them. O(1).
func (c *CPU) Follow() bool {
	if c.followed {
		return false
	}
	c.followed, c.moved = true, 0
	return true
}

// The kinds of event fit the bits of Moved's set.
var _ [64 - NumEvents]struct{}

// count records one event.
func (c *CPU) count(e Event) {
	c.ev[e]++
	c.moved |= 1 << e
}

// countN records n events.
func (c *CPU) countN(e Event, n int) {
	c.ev[e] += uint64(n)
	c.moved |= 1 << e
}

// allocBH models alloc_buffer_head (kmem_cache_zalloc) for a buffer of f
// at byte offset off: a zeroed buffer head. The buffer at offset 0, the
// ring's head, is f's own (Folio.spare) when that is free, so that the
// buffer a lookup reads first shares the folio's pair of cache lines;
// another comes from the CPU's free cache, or is new. Either way it counts
// one EvBHAlloc, as the kernel's slab allocation does. O(1).
func (c *CPU) allocBH(f *Folio, off int64) *BufferHead {
	c.count(EvBHAlloc)
	var bh *BufferHead
	if off == 0 && f.spare.folio == nil {
		bh = &f.spare
	} else if bh = c.bhFree.Get(); bh == nil {
		bh = c.bhSlab.New(bhSlabObjects)
	}
	if c.m.cfg.OneGoroutine { // freeBH's reset cleared the mode
		bh.state.Confine()
		bh.count.Confine()
	}
	return bh
}

// slabObjects is how many folios one slab array holds: a page cache
// filling up allocates once per slabObjects of them. 512 frames of 128
// bytes (a Folio and its spare buffer head) are 64 KiB, a large object,
// which Go allocates page-aligned and without a malloc header: each frame
// is then one aligned 128-byte pair of cache lines, the unit the CPU's
// adjacent-line prefetch fetches, so a lookup of a random page misses once
// for its folio and its first buffer, not twice or three times. The price:
// one live frame (a cached folio, or a buffer head a CPU's bh LRU holds)
// keeps its whole slab of 512 alive, so a page cache reclaimed down to a
// scattered few holds more heap than it uses, until the machine goes.
const slabObjects = 512

// bhSlabObjects is how many buffer heads one slab array holds: 1024, 64
// KiB, a large object, which Go allocates page-aligned and without a malloc
// header, so that each 64-byte buffer head fills exactly one cache line. An
// array of 64 (4 096 bytes) gets an 8-byte header and starts 8 bytes past a
// 64-byte boundary, which put every buffer head across two lines; arrays of
// eight (512 bytes, the largest without a header) are aligned too, but cost
// an allocation per page of 512-byte buffers.
const bhSlabObjects = 1024

// allocBio returns a bio for submit_bh from the CPU's free list, or a new one.
// The list needs no lock: a bio completes on the goroutine that submitted it
// (blk.Device's contract, which the completion's event counting on the
// submitting CPU relies on as well), so it returns to the list of the CPU
// that took it.
func (c *CPU) allocBio() *bhBio {
	if bb := c.bioFree.Get(); bb != nil {
		return bb
	}
	return new(bhBio)
}

// bioCacheMax bounds a CPU's free bio list; beyond it completed bios are left
// to the garbage collector.
const bioCacheMax = 4096

// freeBio returns a completed bio to the free list of the CPU that submitted
// it.
func (c *CPU) freeBio(bb *bhBio) {
	if len(c.bioFree) < bioCacheMax {
		c.bioFree.Put(bb)
	}
}

// folioCacheMax bounds a CPU's free folio cache, in pages per order.
const folioCacheMax = 1024

// allocFolio returns an unused folio of the given order (filemap_alloc_folio),
// recycled from the CPU's free cache of that order when possible (a frame
// with its memory when data is wanted), or a new one with new page frame
// numbers. The order stays the frame's for its whole life.
func (c *CPU) allocFolio(data bool, order uint8) *Folio {
	c.count(EvFolioAlloc)
	l := &c.folioFree[order&15]
	f := l.Get()
	for data && f != nil && f.data == nil { // a metadata-only frame: leave it to the collector
		f = l.Get()
	}
	if f == nil {
		f = c.folioSlab.New(slabObjects)
		f.pfn, f.order = c.m.allocPFN(order), order
		c.m.confineFolio(f) // for the frame's whole life
		if data {
			data := make([]byte, uint64(c.m.cfg.PageSize)<<order)
			f.data = &data
		}
		return f
	}
	f.gen.Add(1) // a new life: the reclaim list's entries for the old one are stale
	if !data {
		f.data = nil
	}
	return f
}

// freeFolio models freeing a folio: the folio, whose last reference is gone,
// is kept for reuse with its frame and memory (addFolio sets its flags anew;
// its ring, if it had one, was freed before, or it would still be
// referenced). A lock-free reader that still holds the pointer cannot take a
// reference while the count is zero, and re-checks mapping and index after
// taking one. (Kept small: put inlines it.)
func (c *CPU) freeFolio(f *Folio) {
	c.count(EvFolioFree)
	if l := &c.folioFree[f.order&15]; len(*l) < folioCacheMax>>f.order {
		l.Put(f)
	}
}

// handOver moves what c's free lists hold to dst's, as far as dst's bounds
// allow: the frames and buffer heads kswapd's pass freed (counted on c) are
// reused by the CPU that allocates next, as the kernel's kswapd frees to
// the per-CPU lists of the CPU it runs on, one of the allocators'. Nothing
// is counted: it is the model's reuse of Go memory, not kernel work. The
// caller drives both CPUs. O(objects moved).
func (c *CPU) handOver(dst *CPU) {
	for order := range c.folioFree {
		src, to := &c.folioFree[order], &dst.folioFree[order]
		for len(*src) > 0 && len(*to) < folioCacheMax>>order {
			to.Put(src.Get())
		}
		clear(*src) // what dst has no room for is the collector's
		*src = (*src)[:0]
	}
	for len(c.bhFree) > 0 && len(dst.bhFree) < bhCacheMax {
		dst.bhFree.Put(c.bhFree.Get())
	}
	clear(c.bhFree)
	c.bhFree = c.bhFree[:0]
}

// freeBH models free_buffer_head: bh is zeroed and kept for reuse, a
// folio's spare by its folio (allocBH), any other on the CPU's free cache.
func (c *CPU) freeBH(bh *BufferHead) {
	c.count(EvBHFree)
	spare := bh.folio != nil && bh == &bh.folio.spare
	bh.reset()
	if !spare && len(c.bhFree) < bhCacheMax {
		c.bhFree.Put(bh)
	}
}
