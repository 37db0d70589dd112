package pageindex

import (
	"math"
	"sync"

	"github.com/google/btree"
)

// defaultBTreeDegree is the degree NewBTree uses when asked for one of 1 or
// less: nodes of 31 to 63 items, a fan-out close to the xarray's 64 slots.
const defaultBTreeDegree = 32

// BTree is the alternative page-cache index: a github.com/google/btree
// B-tree of (index, item) entries ordered by index, guarded by a
// sync.RWMutex. It models no kernel structure; it exists so benchmarks can set
// a lookup whose cost grows with the number of cached pages (O(log n)) against
// the xarray's, which grows with the index. Marks are kept as one ordered set
// of indices per mark, so NextMarked and CountMarked do not scan.
// The zero value is not ready; use NewBTree.
type BTree[T any] struct {
	mu     sync.RWMutex
	items  *btree.BTreeG[btreeEntry[T]]
	marks  [NumMarks]*btree.BTreeG[uint64]
	degree int
	height int // btreeHeightBound(items.Len(), degree), kept current by writers
	multi  int // entries of order > 0: while 0, a lookup needs only the exact key
	// orders holds the order of each entry of order > 0, by first index
	// (kept beside the tree, so that its entries stay two words).
	orders map[uint64]uint8
}

// btreeEntry is one stored item and the first page index it covers, the
// tree's key (its order is in BTree.orders).
type btreeEntry[T any] struct {
	index uint64
	item  *T
}

// orderOf returns the order of the entry whose first index is index. Caller
// holds t.mu.
func (t *BTree[T]) orderOf(index uint64) uint8 {
	if t.multi == 0 {
		return 0
	}
	return t.orders[index]
}

// setOrder records the order of the entry at index (none for order 0).
// Caller holds t.mu for writing.
func (t *BTree[T]) setOrder(index uint64, order uint8) {
	if order == 0 {
		delete(t.orders, index)
		return
	}
	if t.orders == nil {
		t.orders = map[uint64]uint8{}
	}
	t.orders[index] = order
}

// last returns the last index e covers. Caller holds t.mu.
func (t *BTree[T]) last(e btreeEntry[T]) uint64 { return e.index + (uint64(1)<<t.orderOf(e.index) - 1) }

// covering returns the entry covering index, if any: the entry with the
// greatest key at or below index, if it reaches index. Caller holds t.mu.
// O(log n).
func (t *BTree[T]) covering(index uint64) (btreeEntry[T], bool) {
	var found btreeEntry[T]
	ok := false
	t.items.DescendLessOrEqual(btreeEntry[T]{index: index}, func(e btreeEntry[T]) bool {
		found, ok = e, t.last(e) >= index
		return false
	})
	return found, ok
}

// entry returns the entry whose first index is index and which holds item.
// Caller holds t.mu. O(log n).
func (t *BTree[T]) entry(index uint64, item *T) (btreeEntry[T], bool) {
	e, ok := t.items.Get(btreeEntry[T]{index: index})
	return e, ok && e.item == item && item != nil
}

// Compile-time check that BTree implements Index.
var _ Index[int] = (*BTree[int])(nil)

// NewBTree returns an empty BTree whose nodes have minimum degree degree
// (google/btree's meaning: each node but the root holds degree−1 to
// 2·degree−1 items). A degree of 1 or less selects the default, 32 (nodes of
// 31 to 63 items, a fan-out close to the xarray's 64 slots). O(1).
func NewBTree[T any](degree int) *BTree[T] {
	if degree <= 1 {
		degree = defaultBTreeDegree
	}
	t := &BTree[T]{
		items:  btree.NewG(degree, func(a, b btreeEntry[T]) bool { return a.index < b.index }),
		degree: degree,
	}
	for m := range t.marks {
		t.marks[m] = btree.NewOrderedG[uint64](degree)
	}
	return t
}

// Kind returns KindBTree.
func (t *BTree[T]) Kind() Kind { return KindBTree }

// Warm is Index.Warm: the btree's Load, whose item it returns.
func (t *BTree[T]) Warm(index uint64) *T {
	item, _ := t.Load(index)
	return item
}

// Load returns the item at index under the read lock: O(log n) in the number
// n of items, no allocation. google/btree does not report the path it took,
// so levels is Height(), the upper bound on the nodes any lookup visits (0 for
// an empty tree).
func (t *BTree[T]) Load(index uint64) (*T, int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if e, ok := t.items.Get(btreeEntry[T]{index: index}); ok || t.multi == 0 {
		return e.item, t.height
	}
	e, ok := t.covering(index)
	if !ok {
		return nil, t.height
	}
	return e.item, t.height
}

// Insert stores item at index if the slot is empty and reports whether it
// did; false (nothing changed) if occupied or item is nil. O(log n); may
// allocate B-tree nodes.
func (t *BTree[T]) Insert(index uint64, item *T) bool { return t.InsertOrder(index, 0, item) }

// InsertOrder stores item as one entry over the 1 << order indices from
// index if none is covered yet (see Index.InsertOrder). O(log n); may
// allocate B-tree nodes.
func (t *BTree[T]) InsertOrder(index uint64, order uint8, item *T) bool {
	if item == nil || order >= 64 || index&(uint64(1)<<order-1) != 0 {
		return false
	}
	key := btreeEntry[T]{index: index, item: item}
	last := index + (uint64(1)<<order - 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	overlap := false
	if order == 0 && t.multi == 0 {
		overlap = t.items.Has(key)
	} else {
		t.items.DescendLessOrEqual(btreeEntry[T]{index: last}, func(e btreeEntry[T]) bool {
			overlap = t.last(e) >= index // the last entry starting in or before the range reaches into it
			return false
		})
	}
	if overlap {
		return false
	}
	t.items.ReplaceOrInsert(key)
	t.height = btreeHeightBound(t.items.Len(), t.degree)
	if order > 0 {
		t.multi++
		t.setOrder(index, order)
	}
	return true
}

// Delete removes the entry holding exactly item whose first index is index,
// removes index from every mark set, and reports whether it did. O(log n).
func (t *BTree[T]) Delete(index uint64, item *T) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entry(index, item)
	if !ok {
		return false
	}
	t.items.Delete(e)
	for _, set := range t.marks {
		set.Delete(index)
	}
	t.height = btreeHeightBound(t.items.Len(), t.degree)
	if t.orderOf(index) > 0 {
		t.setOrder(index, 0)
		t.multi--
	}
	return true
}

// SetMark adds index to mark m's set if an item is stored there; no-op for an
// empty slot or an invalid mark. O(log n).
func (t *BTree[T]) SetMark(index uint64, m Mark) {
	if !m.valid() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.items.Has(btreeEntry[T]{index: index}) { // an entry's first index
		t.marks[m].ReplaceOrInsert(index)
	}
}

// ClearMark removes index from mark m's set; no-op for an invalid mark.
// O(log n).
func (t *BTree[T]) ClearMark(index uint64, m Mark) {
	if !m.valid() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.marks[m].Delete(index)
}

// UpdateMarks calls fn on item and its marks and gives item the marks fn
// returns, under the write lock, if index holds exactly item, and reports
// whether it did (see Index.UpdateMarks). O(log n), no allocation beyond
// what the mark sets' B-tree nodes need.
func (t *BTree[T]) UpdateMarks(index uint64, item *T, fn func(item *T, marks Marks) Marks) bool {
	if item == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.entry(index, item); !ok {
		return false
	}
	var was Marks
	for m, set := range t.marks {
		if set.Has(index) {
			was |= Mark(m).Bit()
		}
	}
	now := fn(item, was)
	for m, set := range t.marks {
		switch bit := Mark(m).Bit(); {
		case was&bit == now&bit:
		case now&bit != 0:
			set.ReplaceOrInsert(index)
		default:
			set.Delete(index)
		}
	}
	return true
}

// Split replaces the entry of the given order at index holding item by
// 1 << (order − newOrder) entries of order newOrder, each with the entry's
// marks (see Index.Split), under the write lock. O(2^(order−newOrder) ·
// log n); may allocate B-tree nodes.
func (t *BTree[T]) Split(index uint64, item *T, order, newOrder uint8, part func(k int) *T) bool {
	if newOrder >= order {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entry(index, item)
	if !ok || t.orderOf(e.index) != order {
		return false
	}
	var marks []bool
	for _, set := range t.marks {
		marks = append(marks, set.Has(index))
	}
	step := uint64(1) << newOrder
	for k := uint64(0); k < uint64(1)<<(order-newOrder); k++ {
		p := part(int(k))
		if p == nil {
			panic("pageindex: Split with a nil part")
		}
		at := index + k*step
		t.items.ReplaceOrInsert(btreeEntry[T]{index: at, item: p})
		t.setOrder(at, newOrder)
		for m, set := range t.marks {
			if marks[m] {
				set.ReplaceOrInsert(at)
			}
		}
	}
	t.height = btreeHeightBound(t.items.Len(), t.degree)
	t.multi--
	if newOrder > 0 {
		t.multi += 1 << (order - newOrder)
	}
	return true
}

// Marked reports whether the item at index carries mark m. O(log n).
func (t *BTree[T]) Marked(index uint64, m Mark) bool {
	if !m.valid() {
		return false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.marks[m].Has(index)
}

// Next returns the first index >= start an entry covers, and its item: start
// itself when an entry covers it. O(log n).
func (t *BTree[T]) Next(start uint64) (index uint64, item *T, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.multi > 0 {
		if e, covered := t.covering(start); covered {
			return start, e.item, true
		}
	}
	t.items.AscendGreaterOrEqual(btreeEntry[T]{index: start}, func(e btreeEntry[T]) bool {
		index, item, ok = e.index, e.item, true
		return false
	})
	return index, item, ok
}

// NextMarked returns the first item at an index >= start that carries mark m:
// the first index in m's set at or after start, then its item. O(log n).
func (t *BTree[T]) NextMarked(start uint64, m Mark) (index uint64, item *T, ok bool) {
	if !m.valid() {
		return 0, nil, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	t.marks[m].AscendGreaterOrEqual(start, func(i uint64) bool {
		index, ok = i, true
		return false
	})
	if ok {
		e, _ := t.items.Get(btreeEntry[T]{index: index})
		item = e.item
	}
	return index, item, ok
}

// FindMarked returns up to BatchSize items at indices >= start carrying mark
// m, in index order, under one read lock (see Index.FindMarked): an ascent
// of m's set from start, then each item's lookup. O(BatchSize · log n), no
// allocation.
func (t *BTree[T]) FindMarked(start uint64, m Mark) Batch[T] {
	var b Batch[T]
	if !m.valid() {
		b.Done = true
		return b
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	last := start
	t.marks[m].AscendGreaterOrEqual(start, func(i uint64) bool {
		e, _ := t.items.Get(btreeEntry[T]{index: i})
		b.Items[b.N], last = e.item, i
		b.N++
		return b.N < BatchSize
	})
	switch {
	case b.N < BatchSize || last == math.MaxUint64:
		b.Done = true
	default:
		b.Next = last + 1
	}
	return b
}

// CountMarked returns the size of mark m's set (0 for an invalid mark). O(1).
func (t *BTree[T]) CountMarked(m Mark) int {
	if !m.valid() {
		return 0
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.marks[m].Len()
}

// Confine does nothing: the B-tree models no kernel structure, and keeps
// its RWMutex whoever drives it.
func (t *BTree[T]) Confine() {}

// Len returns the number of items stored. O(1).
func (t *BTree[T]) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.items.Len()
}

// Height returns an upper bound on the depth of the item tree (google/btree
// does not expose its depth): the number of node levels of the deepest B-tree
// of this degree that can hold Len() items, 1 + ⌊log_d((n+1)/2)⌋, and 0 when
// empty. Ascending insertion, the page cache's usual fill order, splits full
// nodes in the middle and leaves all but the rightmost nodes at minimum fill,
// so the real depth is at or near this bound. O(1).
func (t *BTree[T]) Height() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.height
}

// Nodes returns an upper-bound estimate of the B-tree nodes held by the item
// tree and the mark sets together: a tree of n items has at most
// 1 + (n−1)/(d−1) nodes, since every node but the root holds at least d−1
// items. O(1).
func (t *BTree[T]) Nodes() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	nodes := btreeNodesBound(t.items.Len(), t.degree)
	for _, set := range t.marks {
		nodes += btreeNodesBound(set.Len(), t.degree)
	}
	return nodes
}

// btreeHeightBound returns the number of levels of the deepest B-tree of
// minimum degree d (>= 2) holding n items. A tree of L levels holds at least
// 2·d^(L−1) − 1 items (a root with one item, every other node d−1), so the
// bound is the largest L with that minimum <= n. O(log n).
func btreeHeightBound(n, d int) int {
	if n == 0 {
		return 0
	}
	levels := 1
	// least is the fewest items a tree of levels+1 levels holds.
	for least := 1; ; levels++ {
		if least+1 > math.MaxInt/d {
			return levels
		}
		least = (least+1)*d - 1
		if least > n {
			return levels
		}
	}
}

// btreeNodesBound returns the most nodes a B-tree of minimum degree d (>= 2)
// holding n items can have: the root holds at least one item, every other
// node at least d−1.
func btreeNodesBound(n, d int) int {
	if n == 0 {
		return 0
	}
	return 1 + (n-1)/(d-1)
}
