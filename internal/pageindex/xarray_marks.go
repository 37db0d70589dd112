package pageindex

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
	if x.lone(index) != nil {
		if x.loneMarks&(1<<m) == 0 {
			x.loneMarks |= 1 << m
			x.marked[m]++
		}
		return
	}
	leaf, off := x.leafFor(index)
	if leaf == nil || leaf.bits[present]&(1<<off) == 0 || leaf.bits[m]&(1<<off) != 0 {
		return
	}
	setBit(leaf, off, int(m))
	x.marked[m]++
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
	if x.lone(index) != nil {
		if x.loneMarks&(1<<m) != 0 {
			x.loneMarks &^= 1 << m
			x.marked[m]--
		}
		return
	}
	leaf, off := x.leafFor(index)
	if leaf == nil || leaf.bits[m]&(1<<off) == 0 {
		return
	}
	clearBit(leaf, off, int(m))
	x.marked[m]--
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
	if x.lone(index) != nil {
		return x.loneMarks&(1<<m) != 0
	}
	leaf, off := x.leafFor(index)
	return leaf != nil && leaf.bits[m]&(1<<off) != 0
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
	defer x.mu.Unlock()
	return x.marked[m]
}
