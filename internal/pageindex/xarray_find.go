package pageindex

import "math/bits"

// Next returns the first item at an index >= start (xa_find, v4.20+, as in
// find_get_entries). Empty subtrees are skipped through the per-node
// occupancy bitmaps, so the cost is O(height) node steps per call whatever the
// gap to the next item. Takes the writer mutex. No allocation. A walk over
// the page cache (truncate's, deleting each folio it finds) asks for the
// slot after the one it last reached: when the writers' leaf hint covers
// start and holds an item at or after it, that is the answer, without a
// descent.
func (x *XArray[T]) Next(start uint64) (uint64, *T, bool) {
	x.mu.Lock()
	if l := x.hint; l != nil && start&^chunkMask == x.hintBase {
		if word := l.bits[present] >> (start & chunkMask); word != 0 {
			index := start + uint64(bits.TrailingZeros64(word))
			item := l.items()[index&chunkMask].Load()
			x.mu.Unlock()
			return index, item, true
		}
	}
	_, index, item, ok := x.find(start, present)
	x.mu.Unlock()
	return index, item, ok
}

// NextMarked returns the first item at an index >= start that carries mark m
// (xa_find with a mark, v4.20+: the walk behind filemap_get_folios_tag and
// writeback_iter). Subtrees without the mark are skipped through the
// propagated mark bitmaps: O(height) node steps per call. ok is false if no
// such item exists or m is invalid. Takes the writer mutex. No allocation.
func (x *XArray[T]) NextMarked(start uint64, m Mark) (uint64, *T, bool) {
	if !m.valid() {
		return 0, nil, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	_, index, item, ok := x.find(start, int(m))
	return index, item, ok
}

// FindMarked returns up to BatchSize items at indices >= start carrying mark
// m, in index order, under one acquisition of the writer mutex (see
// Index.FindMarked; filemap_get_folios_tag, v6.2+, pagevec_lookup_range_tag
// before). Each step down from the root costs O(height) node steps; the
// further marked slots of the leaf it reaches are taken from the leaf's
// bitmap at one instruction each. No allocation.
func (x *XArray[T]) FindMarked(start uint64, m Mark) Batch[T] {
	var b Batch[T]
	if !m.valid() {
		b.Done = true
		return b
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for b.N < BatchSize {
		leaf, index, item, ok := x.find(start, int(m))
		if !ok {
			b.Done = true
			return b
		}
		if leaf == nil { // the lone item at index 0: nothing follows it
			b.Items[0], b.N, b.Done = item, 1, true
			return b
		}
		base := index &^ chunkMask
		for word := leaf.bits[m] &^ (1<<(index&chunkMask) - 1); word != 0 && b.N < BatchSize; word &= word - 1 {
			index = base | uint64(bits.TrailingZeros64(word))
			b.Items[b.N] = leaf.items()[index&chunkMask].Load()
			b.N++
		}
		if index == ^uint64(0) {
			b.Done = true
			return b
		}
		start = index + 1
	}
	b.Next = start
	return b
}

// find returns the first item at an index >= start whose leaf bit in bitmap b
// is set (present for any item, or a mark), with its index and its leaf (nil
// for the lone item in the head). It descends through set bits, and when a
// node has none at or after the current slot it climbs to the parent and
// resumes at the slot after the one it came from. Caller holds x.mu.
func (x *XArray[T]) find(start uint64, b int) (*xaNode[T], uint64, *T, bool) {
	h := x.head.Load()
	if h == nil || start > h.maxIndex {
		return nil, 0, nil, false
	}
	if h.root == nil { // lone item: start is 0 here
		if b == present || x.loneMarks&(1<<b) != 0 {
			return nil, 0, h.lone, true
		}
		return nil, 0, nil, false
	}
	n, shift, index := h.root, h.shift, start
	off := (index >> shift) & chunkMask
	for {
		word := uint64(0)
		if off < chunkSize {
			word = n.bits[b] &^ (1<<off - 1)
		}
		if word == 0 {
			if n.parent == nil {
				return nil, 0, nil, false
			}
			off = uint64(n.offset) + 1
			n, shift = n.parent, shift+chunkShift
			continue
		}
		next := uint64(bits.TrailingZeros64(word))
		if next != (index>>shift)&chunkMask {
			// Moved past the slot holding start's path: restart at the
			// first index of slot next.
			index = ((index>>shift)&^chunkMask | next) << shift
		}
		if shift == 0 {
			return n, index, n.items()[next].Load(), true
		}
		n, shift = n.children[next].Load(), shift-chunkShift
		off = (index >> shift) & chunkMask
	}
}
