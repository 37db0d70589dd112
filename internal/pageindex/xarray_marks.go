package pageindex

import "math/bits"

// locate returns the item stored at index (nil if none), the marks its slot
// carries and where they are kept: bit off of leaf's bitmaps, or the head's
// loneMarks when leaf is nil. Only the first slot of a multi-index entry
// carries marks. Caller holds x.mu. O(height).
func (x *XArray[T]) locate(index uint64) (item *T, marks Marks, leaf *xaNode[T], off uint64) {
	h := x.head.Load()
	switch {
	case h == nil || index > h.maxIndex:
		return nil, 0, nil, 0
	case h.root == nil: // the lone item; index is 0 here
		return h.lone, Marks(x.loneMarks), nil, 0
	}
	if x.hint != nil && index&^chunkMask == x.hintBase {
		leaf = x.hint
	} else if leaf, _ = descend(h, index); leaf == nil {
		return nil, 0, nil, 0
	} else {
		x.hint, x.hintBase = leaf, index&^chunkMask
	}
	off = index & chunkMask
	if item = leaf.items()[off].Load(); item == nil {
		return nil, 0, nil, 0
	}
	// One shift and mask per mark, written out: every mark update and every
	// delete locates its slot, and the loop's counter and bounds check cost
	// as much as the bits.
	b := &leaf.bits
	marks = Marks(b[MarkDirty]>>off&1) | Marks(b[MarkWriteback]>>off&1)<<MarkWriteback | Marks(b[MarkToWrite]>>off&1)<<MarkToWrite
	return item, marks, leaf, off
}

// The unrolled read of locate covers every mark.
var _ = [1]struct{}{}[NumMarks-3]

// changeMarks gives the item that locate found at (leaf, off) — the lone
// item when leaf is nil — the marks now instead of was: each mark set is
// propagated to the ancestors (xas_set_mark's upward walk), each mark
// cleared is cleared in every ancestor left without it below
// (xas_clear_mark's), and the per-mark counts follow. Caller holds x.mu.
// O(height) per changed mark, no allocation.
func (x *XArray[T]) changeMarks(leaf *xaNode[T], off uint64, was, now Marks) {
	if now &= allMarks; now == was {
		return
	}
	// Only the marks that change, lowest first (usually one: a folio made
	// dirty, or starting or ending writeback).
	for diff := uint8(was ^ now); diff != 0; diff &= diff - 1 {
		m := Mark(bits.TrailingZeros8(diff))
		if now&(1<<m) != 0 {
			x.marked[m]++
			if leaf != nil {
				setBit(leaf, off, int(m))
			}
		} else {
			x.marked[m]--
			if leaf != nil {
				clearBit(leaf, off, int(m))
			}
		}
	}
	if leaf == nil {
		x.loneMarks = uint8(now)
	}
}

// SetMark sets mark m on the item at index (xa_set_mark, v4.20+; in v5.17+
// the page cache sets the dirty mark in __folio_mark_dirty, the writeback
// mark in __folio_start_writeback and the towrite mark in
// tag_pages_for_writeback). The bit is propagated to every ancestor so that
// NextMarked can skip unmarked subtrees. No-op for an empty slot or an invalid
// mark. O(height), no allocation.
func (x *XArray[T]) SetMark(index uint64, m Mark) {
	if !m.valid() {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if item, was, leaf, off := x.locate(index); item != nil && x.first(leaf, off, index, item) {
		x.changeMarks(leaf, off, was, was|m.Bit())
	}
}

// ClearMark clears mark m on the item at index (xa_clear_mark, v4.20+; in
// v5.17+ __folio_start_writeback clears the dirty and towrite marks and
// __folio_end_writeback the writeback mark). An ancestor's
// bit is cleared when no item below it keeps the mark. No-op for an empty
// slot, an unset mark or an invalid mark. O(height), no allocation.
func (x *XArray[T]) ClearMark(index uint64, m Mark) {
	if !m.valid() {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if item, was, leaf, off := x.locate(index); item != nil && x.first(leaf, off, index, item) {
		x.changeMarks(leaf, off, was, was&^m.Bit())
	}
}

// UpdateMarks calls fn on item and its marks and gives item the marks fn
// returns, all under the writer mutex, if index holds exactly item; it
// reports whether it did (see Index.UpdateMarks). This is xa_lock, xas_load,
// the mapping check, the flag change and xas_set_mark/xas_clear_mark in one
// critical section, as __folio_mark_dirty and __folio_start_writeback have
// them (v6.x; __set_page_dirty and __test_set_page_writeback in v5.10).
// O(height), no allocation.
func (x *XArray[T]) UpdateMarks(index uint64, item *T, fn func(item *T, marks Marks) Marks) bool {
	if item == nil {
		return false
	}
	x.mu.Lock()
	cur, was, leaf, off := x.locate(index)
	if cur != item || !x.first(leaf, off, index, item) {
		x.mu.Unlock()
		return false
	}
	x.changeMarks(leaf, off, was, fn(item, was))
	x.mu.Unlock() // not deferred, as in InsertOrder: fn must not panic
	return true
}

// Marked reports whether the item at index carries mark m (xa_get_mark,
// v4.20+); false for an empty slot or an invalid mark. Takes the writer
// mutex, since marks are writer state. O(height), no allocation.
func (x *XArray[T]) Marked(index uint64, m Mark) bool {
	if !m.valid() {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	_, marks, _, _ := x.locate(index)
	return marks.Has(m)
}

// CountMarked returns the number of items carrying mark m (0 for an invalid
// mark). O(1): the count is kept as marks change. The kernel has no such
// xarray call; it counts dirty and writeback pages in the NR_FILE_DIRTY and
// NR_WRITEBACK node statistics as it sets and clears the tags.
func (x *XArray[T]) CountMarked(m Mark) int {
	if !m.valid() {
		return 0
	}
	x.mu.Lock()
	n := x.marked[m]
	x.mu.Unlock()
	return n
}
