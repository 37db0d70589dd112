package pageindex

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/internal/enum"
)

// Mark is an xarray search mark (XA_MARK_0, XA_MARK_1, XA_MARK_2 in
// include/linux/xarray.h, v4.20+). The page cache gives them the names
// PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK and PAGECACHE_TAG_TOWRITE
// (include/linux/fs.h, v4.20–v6.x), which the constants below mirror.
//
// Values at or above NumMarks are not marks: the Index methods treat them as
// marks that no item carries (setting or clearing one does nothing, Marked
// reports false, NextMarked finds nothing, CountMarked returns 0).
type Mark uint8

const (
	// MarkDirty models PAGECACHE_TAG_DIRTY (XA_MARK_0): the folio is dirty.
	MarkDirty Mark = iota
	// MarkWriteback models PAGECACHE_TAG_WRITEBACK (XA_MARK_1): the folio is
	// under writeback.
	MarkWriteback
	// MarkToWrite models PAGECACHE_TAG_TOWRITE (XA_MARK_2): set by
	// tag_pages_for_writeback for WB_SYNC_ALL writeback so that a data-integrity
	// pass does not chase pages dirtied after it started.
	MarkToWrite
	// NumMarks is the number of marks (XA_MAX_MARKS); it is not a mark.
	NumMarks
)

// valid reports whether m names one of the NumMarks marks.
func (m Mark) valid() bool { return m < NumMarks }

// Marks is a set of marks, bit m standing for Mark m: the marks one item
// carries, as UpdateMarks passes and takes them. Bits at or above NumMarks
// name no mark; UpdateMarks ignores them.
type Marks uint8

// allMarks is the set of every valid mark.
const allMarks = Marks(1)<<NumMarks - 1

// Bit returns the set holding only m, or the empty set if m is not a valid
// mark.
func (m Mark) Bit() Marks {
	if !m.valid() {
		return 0
	}
	return 1 << m
}

// Has reports whether s holds mark m (false for an invalid mark).
func (s Marks) Has(m Mark) bool { return s&m.Bit() != 0 }

// BatchSize is the capacity of a Batch: PAGEVEC_SIZE, the number of folios a
// pagevec or folio_batch holds (include/linux/pagevec.h: 15 in v5.10–v6.6;
// later kernels raised it to 31).
const BatchSize = 15

// Batch is what FindMarked returns: Items[:N], the items found, in index
// order. Done reports that the search reached the end of the index space, so
// no item at a higher index carried the mark when the batch was taken;
// otherwise the search goes on from Next, the index after the last item found.
// A Batch is returned by value, so filling one allocates nothing.
type Batch[T any] struct {
	Items [BatchSize]*T
	N     int
	Next  uint64
	Done  bool
}

// Index is the page-cache index of a simulated address_space: it maps a page
// index (pgoff_t) to a *T, normally a folio. An entry covers 1 << order
// consecutive indices, its order, from its first index, a multiple of
// 1 << order: the kernel's multi-index entries, which hold the large folios
// of v5.17+ page caches (order 0 is one index, all the block device's
// mapping held before v6.15). Load of any index an entry covers finds it;
// marks belong to an entry and are kept at its first index, so the methods
// that take an index to name an entry (Delete, the mark methods, Split) act
// only at that first index and treat the entry's other indices as empty. It models the part of
// struct address_space that the kernel keeps in mapping->i_pages (an xarray
// since v4.20; a radix tree before). Two implementations exist, selected by
// Kind: XArray (the kernel's structure) and BTree (the alternative the
// benchmarks compare it with).
//
// A nil *T is never stored: nil means "no item". All methods are safe for
// concurrent use.
type Index[T any] interface {
	// Load returns the item stored at index (nil if none) and the number of
	// tree levels it descended to find out. For the xarray that is the number
	// of nodes visited: 0 when the answer came from the head (the lone item at
	// index 0, an empty array, or an index beyond the range the current height
	// covers). For the btree it is Height(), an upper bound (see BTree.Load).
	// Load never allocates. The xarray's Load is lock-free and may run
	// concurrently with writers; like an RCU reader in the kernel it may
	// return an item that a concurrent Delete is removing, or miss one that a
	// concurrent Insert is adding, but never an item stored at another index.
	// The btree's Load takes a read lock. Models xa_load / filemap_get_entry.
	Load(index uint64) (item *T, levels int)
	// Warm returns the item Load would and reads what a later Load or mark
	// update at index will read (for the xarray, after the descent, the
	// leaf's slot and its header, which holds the marks, with loads
	// independent of each other), so that a caller warming a run of
	// upcoming random indices overlaps their host cache misses. It is a
	// hint to the host's caches, not a model of the kernel: it counts
	// nothing and changes nothing. Lock-free like Load for the xarray; the
	// btree's is its Load. O(height), no allocation.
	Warm(index uint64) *T
	// Insert stores item at index if the slot is empty and reports whether it
	// did. It returns false and changes nothing if the slot is occupied (the
	// kernel's -EEXIST from xa_insert / filemap_add_folio) or item is nil.
	Insert(index uint64, item *T) bool
	// InsertOrder stores item as one entry over the 1 << order indices from
	// index if they are all empty, and reports whether it did. It returns
	// false and changes nothing if one is occupied (-EEXIST), item is nil,
	// order is 64 or more, or index is not a multiple of 1 << order. Models
	// __filemap_add_folio of a folio of that order (xas_set_order, v5.17+).
	// InsertOrder(index, 0, item) is Insert(index, item).
	InsertOrder(index uint64, order uint8, item *T) bool
	// Delete removes item's entry if and only if index is the entry's first
	// index and it holds exactly item (pointer equality), clears all its
	// marks and every index it covers, and reports whether it did. Models
	// page_cache_delete (xas_store NULL + xas_init_marks), guarded like
	// xa_cmpxchg(index, item, NULL).
	Delete(index uint64, item *T) bool
	// Split replaces the entry of the given order whose first index is
	// index, if it holds exactly item, by 1 << (order − newOrder) entries of
	// order newOrder: part(k) covers the k-th piece from index, and each part
	// gets the marks the entry had. It reports whether it did; false
	// (nothing changed, part not called) if the entry is not there with that
	// order or newOrder is not below order. part must return a distinct
	// non-nil item per k. A concurrent Load sees the old item or the new part
	// at each index. Models xas_split (v5.17+), as __split_unmapped_folio
	// splits a large folio in the page cache.
	Split(index uint64, item *T, order, newOrder uint8, part func(k int) *T) bool
	// SetMark sets mark m on the item at index; it does nothing if the slot is
	// empty or m is not a valid mark. Models xa_set_mark.
	SetMark(index uint64, m Mark)
	// ClearMark clears mark m on the item at index; it does nothing if the
	// slot is empty, the mark is not set, or m is not a valid mark. Models
	// xa_clear_mark.
	ClearMark(index uint64, m Mark)
	// Marked reports whether the item at index carries mark m (false for an
	// empty slot or an invalid mark). Models xa_get_mark.
	Marked(index uint64, m Mark) bool
	// Next returns the first index >= start that an entry covers, and that
	// entry's item; ok is false if there is none. For a multi-index entry
	// covering start that is start itself. Models xa_find (and
	// find_get_entries' walk).
	Next(start uint64) (index uint64, item *T, ok bool)
	// NextMarked returns the first item at an index >= start that carries
	// mark m; ok is false if there is none or m is invalid. Models xa_find
	// with a mark, the walk of filemap_get_folios_tag / writeback_iter.
	NextMarked(start uint64, m Mark) (index uint64, item *T, ok bool)
	// UpdateMarks changes the marks of one item if it is still stored: when
	// the slot at index holds exactly item (pointer equality) it calls fn
	// with item and the marks item carries, gives item the marks fn returns
	// (bits of invalid marks are ignored) and reports true; otherwise it
	// calls nothing, changes nothing and reports false. fn runs under the
	// writer lock and the new marks are in place before the lock is
	// released, so what fn does to the item's own state (a folio's flags)
	// and the mark change form one step for every other method but Load:
	// every method that reads marks takes that lock. fn must not call the
	// index, nor panic (the lock is not released on the way out, as the
	// kernel's xa_lock section has no unwinding either). Models the xa_lock section of __folio_mark_dirty,
	// __folio_start_writeback and __folio_end_writeback (v6.x; their page
	// forms in v5.10): check the folio is still the mapping's, change its
	// flag and set or clear its tags. O(height) for the xarray,
	// O(log n) for the btree; no allocation.
	UpdateMarks(index uint64, item *T, fn func(item *T, marks Marks) Marks) bool
	// FindMarked returns up to BatchSize items at indices >= start that
	// carry mark m, in index order, found under one acquisition of the lock
	// (an invalid mark finds nothing and is Done). Models
	// filemap_get_folios_tag filling a folio_batch (pagevec_lookup_range_tag
	// before v6.2), the lookup of writeback (write_cache_pages,
	// writeback_iter) and of filemap_fdatawait. Like the kernel's, a batch
	// is a snapshot: an item marked after the call, at an index below the
	// batch's Next, is not found by a walk that goes on from Next. No
	// allocation.
	FindMarked(start uint64, m Mark) Batch[T]
	// CountMarked returns the number of items carrying mark m in O(1) (0 for
	// an invalid mark). The kernel keeps such counts in the NR_FILE_DIRTY /
	// NR_WRITEBACK statistics rather than in the xarray; writeback accounting
	// uses this.
	CountMarked(m Mark) int
	// Len returns the number of entries stored (a multi-index entry counts
	// once).
	Len() int
	// Height returns the depth of the structure: for the xarray the current
	// tree height (0 when empty or when the only item is index 0 held in the
	// head); for the btree a documented upper bound (see BTree.Height).
	Height() int
	// Nodes returns the number of nodes the structure holds, for memory
	// reports: exact for the xarray, an upper-bound estimate for the btree.
	Nodes() int
	// Kind reports which implementation this is.
	Kind() Kind
	// Confine declares that one goroutine at a time uses the index from now
	// on (package conc's confinement): the xarray's writer lock becomes plain
	// stores; the btree, which models no kernel structure, keeps its
	// RWMutex. Call it before the index is shared.
	Confine()
}

// Kind selects an Index implementation.
type Kind uint8

const (
	// KindXArray selects XArray, the kernel's radix tree of 64-slot nodes.
	KindXArray Kind = iota
	// KindBTree selects BTree, a github.com/google/btree B-tree.
	KindBTree
)

// kindNames maps each Kind to its String form; ParseKind inverts it.
var kindNames = enum.New[Kind]("Kind", []string{KindXArray: "xarray", KindBTree: "btree"}...).WithError(ErrUnknownKind)

// ErrUnknownKind is returned (wrapped) by ParseKind for a name that is not a
// Kind; test for it with errors.Is.
var ErrUnknownKind = errors.New("pageindex: unknown index kind")

// String returns "xarray" or "btree", or "Kind(n)" for a value that names no
// implementation.
func (k Kind) String() string { return kindNames.String(k) }

// ParseKind returns the Kind whose String is s (exact, lower case). For any
// other string it returns an error wrapping ErrUnknownKind that names the
// valid choices. O(number of kinds).
func ParseKind(s string) (Kind, error) { return kindNames.Parse(s) }

// New returns an empty Index of kind k: NewXArray for KindXArray, NewBTree
// with the default degree for KindBTree. It panics if k is not one of the Kind
// constants, which is a programming error (use ParseKind to validate input).
func New[T any](k Kind) Index[T] {
	switch k {
	case KindXArray:
		return NewXArray[T]()
	case KindBTree:
		return NewBTree[T](0)
	}
	panic(fmt.Sprintf("pageindex.New: unknown %v", k))
}
