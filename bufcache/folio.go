package bufcache

import (
	"runtime"
	"sync/atomic"

	"github.com/bhsim/bhsim/internal/conc"
	"github.com/bhsim/bhsim/internal/enum"
)

// FolioFlag is a page flag (PG_*) of a Folio.
type FolioFlag uint32

// The folio flags the model uses.
const (
	// FolioLocked is PG_locked: the folio lock itself (folio_lock sets it,
	// folio_unlock clears it).
	FolioLocked FolioFlag = 1 << iota
	// FolioUptodate is PG_uptodate: every byte of the folio is valid.
	FolioUptodate
	// FolioDirty is PG_dirty: the folio holds data not yet written back.
	FolioDirty
	// FolioWriteback is PG_writeback: write I/O is in flight.
	FolioWriteback
	// FolioReferenced is PG_referenced (first step of folio_mark_accessed).
	FolioReferenced
	// FolioActive is PG_active (the folio is on the active LRU list).
	FolioActive
	// FolioPrivate is PG_private: a buffer ring is attached.
	FolioPrivate
	// FolioError is PG_error: an I/O error hit the folio.
	FolioError
	// FolioReadahead is PG_readahead: the folio a read must reach to start
	// the next asynchronous readahead window.
	FolioReadahead
)

// folioFlagNames names the flags for String, in bit order.
var folioFlagNames = enum.NewFlags[FolioFlag]("locked", "uptodate", "dirty", "writeback", "referenced", "active",
	"private", "error", "readahead")

// String lists the set flags, e.g. "uptodate|private" ("0" for none; bits
// without a name in hexadecimal).
func (f FolioFlag) String() string { return folioFlagNames.String(f) }

// Folio models struct folio: 1 << Order pages at consecutive page indices
// (order 0, one page, in the block device's mapping from v5.x to v6.14; any
// order from the mapping's minimum up to MAX_PAGECACHE_ORDER from v6.15, see
// FolioPolicy), its flags, reference count, the buffer ring attached as
// folio->private, and the folio's data (nil on metadata-only devices).
//
// References: the page cache holds one while the folio is in the index, the
// attached buffer ring holds one (attach_page_private), and every lookup that
// returns the folio takes one that the caller drops.
type Folio struct {
	index   uint64
	mapping conc.Pointer[Mapping] // nil once removed from the page cache
	private *BufferHead
	data    *[]byte       // nil on a metadata-only device
	pfn     uint64        // simulated page frame number of the first page: physical contiguity for bio segments
	gen     atomic.Uint64 // incremented each time the frame is reused (reclaim list entries)
	flags   conc.Bits[FolioFlag]
	ref     conc.Int32
	// order is folio_order: the folio spans 1 << order pages; fixed for the
	// frame's life but by a split, which changes it with the count frozen.
	order uint8
	// spare is the frame's own buffer head, the one a ring of a single
	// buffer (an order-0 folio at page-sized blocks) takes
	// (allocPageBuffers): the folio's fields fill one 64-byte line, spare
	// the next, so a slab's frames of 128 bytes put a folio and its buffer
	// in one aligned pair of lines, which the CPU's adjacent-line prefetch
	// may fetch together, and which writeback and HostPrefetch read ahead
	// together (touchFolios).
	spare BufferHead
}

// Index returns the folio's page index in its mapping: that of its first
// page, a multiple of 1 << Order.
func (f *Folio) Index() uint64 { return f.index }

// Order returns folio_order: the folio spans 1 << Order pages.
func (f *Folio) Order() uint8 { return f.order }

// NrPages returns folio_nr_pages, 1 << Order.
func (f *Folio) NrPages() uint64 { return 1 << f.order }

// covers reports whether the folio spans page index (the first test is the
// order-0 lookup's, all the threads' kernels make).
func (f *Folio) covers(index uint64) bool {
	return f.index == index || index-f.index < 1<<f.order
}

// Flags returns the folio's flags.
func (f *Folio) Flags() FolioFlag { return f.flags.Load() }

// Has reports whether every flag of fl is set.
func (f *Folio) Has(fl FolioFlag) bool { return f.flags.Has(fl) }

// RefCount returns the folio's reference count (folio_ref_count).
func (f *Folio) RefCount() int { return int(f.ref.Load()) }

// Data returns the folio's bytes (PAGE_SIZE << Order), or nil on a
// metadata-only device.
func (f *Folio) Data() []byte { return f.bytes() }

// bytes returns the folio's data, nil on a metadata-only device. O(1).
func (f *Folio) bytes() []byte {
	if f.data == nil {
		return nil
	}
	return *f.data
}

// Buffers returns the head of the attached buffer ring (folio_buffers), or nil.
// The caller must hold the folio lock or a reference on a buffer of the ring.
func (f *Folio) Buffers() *BufferHead { return f.private }

// tryGet models folio_try_get: take a reference unless the count is zero (the
// folio is being freed). This is how lock-free lookups stay safe.
func (f *Folio) tryGet(cpu *CPU) bool {
	for {
		r := f.ref.Load()
		if r <= 0 {
			return false
		}
		if f.ref.CompareAndSwap(r, r+1) {
			cpu.count(EvFolioGet)
			return true
		}
	}
}

// get models folio_get on a folio the caller already holds a reference to.
func (f *Folio) get(cpu *CPU) {
	cpu.count(EvFolioGet)
	f.ref.Add(1)
}

// put models folio_put. The last reference frees the folio. (It is on every
// lookup's path, and written to stay within the compiler's inlining budget.)
func (f *Folio) put(cpu *CPU) {
	cpu.count(EvFolioPut)
	if r := f.ref.Add(-1); r <= 0 {
		if r < 0 {
			panic("bufcache: folio reference count below zero")
		}
		cpu.freeFolio(f)
	}
}

// lockFolio models folio_lock: test-and-set PG_locked. Before it waits it
// flushes the CPU's plug, as io_schedule does: the holder may be waiting for
// I/O sitting in that plug. Waiting yields the processor (the kernel sleeps on
// the folio's wait queue).
func (f *Folio) lockFolio(cpu *CPU) {
	cpu.count(EvFolioLock)
	if !f.flags.TestAndSet(FolioLocked) {
		return
	}
	cpu.plug.Wait()
	for f.flags.TestAndSet(FolioLocked) {
		runtime.Gosched()
	}
}

// tryLockFolio models folio_trylock.
func (f *Folio) tryLockFolio() bool { return !f.flags.TestAndSet(FolioLocked) }

// unlockFolio models folio_unlock. Unlocking an unlocked folio is a broken
// invariant of the model.
func (f *Folio) unlockFolio() {
	if !f.flags.TestAndClear(FolioLocked) {
		panic("bufcache: folio_unlock of an unlocked folio")
	}
}

// markAccessed models folio_mark_accessed's two-step promotion: an unreferenced
// folio becomes referenced; a referenced inactive one becomes active (and
// unreferenced); an active referenced one is left alone.
func (f *Folio) markAccessed(cpu *CPU) {
	cpu.count(EvMarkAccessed)
	switch v := f.flags.Load(); {
	case v&FolioReferenced == 0:
		f.flags.Set(FolioReferenced)
	case v&FolioActive == 0:
		f.flags.Set(FolioActive)
		f.flags.Clear(FolioReferenced)
	}
}
