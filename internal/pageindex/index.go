package pageindex

import (
	"errors"
	"fmt"
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

// Index is the page-cache index of a simulated address_space: it maps a page
// index (pgoff_t) to a *T, normally a folio. It models the part of
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
	// Insert stores item at index if the slot is empty and reports whether it
	// did. It returns false and changes nothing if the slot is occupied (the
	// kernel's -EEXIST from xa_insert / filemap_add_folio) or item is nil.
	Insert(index uint64, item *T) bool
	// Delete removes item from index if and only if the slot holds exactly
	// item (pointer equality), clears all its marks, and reports whether it
	// did. Models page_cache_delete (xas_store NULL + xas_init_marks), guarded
	// like xa_cmpxchg(index, item, NULL).
	Delete(index uint64, item *T) bool
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
	// Next returns the first item at an index >= start; ok is false if there
	// is none. Models xa_find (and find_get_entries' walk).
	Next(start uint64) (index uint64, item *T, ok bool)
	// NextMarked returns the first item at an index >= start that carries
	// mark m; ok is false if there is none or m is invalid. Models xa_find
	// with a mark, the walk of filemap_get_folios_tag / writeback_iter.
	NextMarked(start uint64, m Mark) (index uint64, item *T, ok bool)
	// CountMarked returns the number of items carrying mark m in O(1) (0 for
	// an invalid mark). The kernel keeps such counts in the NR_FILE_DIRTY /
	// NR_WRITEBACK statistics rather than in the xarray; writeback accounting
	// uses this.
	CountMarked(m Mark) int
	// Len returns the number of items stored.
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
var kindNames = [...]string{KindXArray: "xarray", KindBTree: "btree"}

// ErrUnknownKind is returned (wrapped) by ParseKind for a name that is not a
// Kind; test for it with errors.Is.
var ErrUnknownKind = errors.New("pageindex: unknown index kind")

// String returns "xarray" or "btree", or "Kind(n)" for a value that names no
// implementation.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind returns the Kind whose String is s (exact, lower case). For any
// other string it returns an error wrapping ErrUnknownKind that names the
// valid choices.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("%w %q (valid: %s, %s)", ErrUnknownKind, s, KindXArray, KindBTree)
}

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
