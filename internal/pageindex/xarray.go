package pageindex

import (
	"github.com/bhsim/bhsim/internal/conc"
)

// XArray is an xarray-style radix tree of 64-slot nodes mapping page indices
// to items: the page cache's i_pages (lib/xarray.c, v4.20+, which replaced
// the radix tree of lib/radix-tree.c). The zero value is an empty XArray;
// NewXArray returns one too.
//
// Readers (Load) take no lock: they load an immutable head record and follow
// atomic slot pointers. Writers (Insert, Delete, the mark methods) serialise
// on a mutex, the analogue of xa_lock. Memory: one 576-byte node per
// occupied 64-slot range per level, as in the kernel; Nodes reports the count.
type XArray[T any] struct {
	// head is the current shape of the tree; nil when the array is empty. It
	// is replaced (never modified) when the shape changes, so a reader always
	// sees a root, height and range that belong together.
	head conc.Pointer[xaHead[T]]

	mu conc.Mutex // serialises writers; guards everything below
	// loneMarks holds the marks of the lone item in the head, bit m for mark
	// m (the kernel keeps them in xa_flags).
	loneMarks uint8
	count     int           // entries stored
	multi     int           // of those, multi-index entries (order > 0)
	nodes     int           // nodes allocated and linked into the tree
	marked    [NumMarks]int // items carrying each mark
	// hint is the leaf a writer's last descent reached, linked in the tree
	// (nil when there is none), and hintBase the first index it covers: a
	// writer's next operation on the same 64 indices — the page cache's
	// add, dirty, writeback start and end, delete of consecutive pages —
	// starts there instead of at the root, as the kernel's xa_state keeps
	// its node between steps. Unlinking a leaf (prune, shrink) forgets it.
	// Lock-free readers do not use it.
	hint     *xaNode[T]
	hintBase uint64
}

// xaHead is an immutable snapshot of the tree's shape (the kernel's xa_head
// plus the root node's shift).
type xaHead[T any] struct {
	root     *xaNode[T] // top node; nil when the only item is lone at index 0
	lone     *T         // the item at index 0 when root is nil (never nil then)
	maxIndex uint64     // largest index the tree covers: 64^height − 1, or 0 for lone
	shift    uint       // index bits below the root's slot number: 6·(height−1)
	height   int        // number of node levels; 0 for lone
}

// Compile-time check that XArray implements Index.
var _ Index[int] = (*XArray[int])(nil)

// NewXArray returns an empty XArray (xa_init / mapping_init, v4.20+).
// O(1).
func NewXArray[T any]() *XArray[T] { return &XArray[T]{} }

// newTreeHead returns the head record for a tree of the given height.
func newTreeHead[T any](root *xaNode[T], height int) *xaHead[T] {
	return &xaHead[T]{
		root:     root,
		maxIndex: maxIndexFor(height),
		shift:    chunkShift * uint(height-1),
		height:   height,
	}
}

// Kind returns KindXArray.
func (x *XArray[T]) Kind() Kind { return KindXArray }

// Load returns the item at index and the number of nodes visited. It models
// xa_load (lib/xarray.c, v4.20–v6.x) as used by filemap_get_entry (v6.3+):
// lock-free, O(height) = O(log64 index), no allocation. An index above the
// range of the current height, an empty array and the lone item at index 0
// are answered from the head after 0 levels. Safe concurrently with writers
// (see Index.Load for what a racing reader may see).
func (x *XArray[T]) Load(index uint64) (*T, int) {
	h := x.head.Load()
	if h == nil || index > h.maxIndex {
		return nil, 0
	}
	if h.root == nil {
		return h.lone, 0
	}
	leaf, levels := descend(h, index)
	if leaf == nil {
		return nil, levels
	}
	return leaf.items()[index&chunkMask].Load(), levels
}

// Warm is Index.Warm: Load's descent, then the leaf's slot and, beside it,
// its shift, which shares the header's cache line with the marks that
// locate reads (a field that never changes once the leaf is published, so
// the read races with no writer). O(height), no allocation.
func (x *XArray[T]) Warm(index uint64) *T {
	h := x.head.Load()
	if h == nil || index > h.maxIndex {
		return nil
	}
	if h.root == nil {
		return h.lone
	}
	leaf, _ := descend(h, index)
	if leaf == nil || leaf.shift != 0 {
		return nil
	}
	return leaf.items()[index&chunkMask].Load()
}

// descend walks from h's root towards index and returns the leaf that would
// hold it (nil if a node on the way is missing) and the nodes visited.
// Precondition: h.root != nil and index <= h.maxIndex. Lock-free.
func descend[T any](h *xaHead[T], index uint64) (*xaNode[T], int) {
	n, levels := h.root, 1
	for shift := h.shift; shift > 0; shift -= chunkShift {
		n = n.children[(index>>shift)&chunkMask].Load()
		if n == nil {
			return nil, levels
		}
		levels++
	}
	return n, levels
}

// Insert stores item at index if the slot is empty, growing the tree as
// needed, and reports whether it did; false (nothing changed) if the slot is
// occupied or item is nil. Models xa_insert (-EEXIST) as called by
// __filemap_add_folio (v5.17+). A lone insert at index 0 into an empty array
// is kept in the head without a node. O(height); allocates only the nodes
// (and head record) a new shape needs.
func (x *XArray[T]) Insert(index uint64, item *T) bool { return x.InsertOrder(index, 0, item) }

// InsertOrder stores item as one entry over the 1 << order indices from
// index (see Index.InsertOrder). The item is stored in every slot of the
// range, so Load of any of them finds it with one descent; the kernel keeps
// one canonical slot and sibling entries in the same node for orders below
// 6, and one slot of a higher node for larger orders (xas_create with
// xa_shift, v4.20+). Marks live on the first slot, as the kernel's on the
// canonical one. O(height + 2^order); allocates only the nodes (and head
// record) the range needs.
func (x *XArray[T]) InsertOrder(index uint64, order uint8, item *T) bool {
	if item == nil || order >= 64 || index&(uint64(1)<<order-1) != 0 {
		return false
	}
	x.mu.Lock()
	ok := x.insertOrder(index, order, item)
	x.mu.Unlock() // not deferred: a deferred call costs as much as the unlock, on every page added
	return ok
}

// insertOrder is InsertOrder's work under x.mu, its arguments checked.
func (x *XArray[T]) insertOrder(index uint64, order uint8, item *T) bool {
	last := index + (uint64(1)<<order - 1)
	h := x.head.Load()
	if order == 0 {
		return x.insert0(h, index, item)
	}
	if _, at, _, ok := x.find(index, present); ok && at <= last {
		return false
	}
	root, height := x.grow(h, heightFor(last))
	for i := index; ; {
		leaf := x.pathTo(root, height, i)
		for off := i & chunkMask; ; off++ {
			leaf.items()[off].Store(item, x.mu.Confined())
			setBit(leaf, off, present)
			if i == last || off == chunkMask {
				break
			}
			i++
		}
		if i == last {
			break
		}
		i++
	}
	if h == nil || h.root != root {
		x.head.Store(newTreeHead(root, height), x.mu.Confined())
	}
	x.count++
	if order > 0 {
		x.multi++
	}
	return true
}

// insert0 is insertOrder for an order-0 entry, h the current head: one
// descent, which finds the slot and builds the path to it. An occupied
// slot's path exists, and a tree holding index already has the height for
// it, so a refused insert changes nothing, as if the slot had been looked
// up first. Caller holds x.mu.
func (x *XArray[T]) insert0(h *xaHead[T], index uint64, item *T) bool {
	switch {
	case h == nil && index == 0:
		x.head.Store(&xaHead[T]{lone: item}, x.mu.Confined())
		x.count++
		return true
	case h != nil && h.root == nil && index == 0: // the lone item's slot
		return false
	}
	root, height := x.grow(h, heightFor(index))
	leaf, off := x.pathTo(root, height, index), index&chunkMask
	if leaf.items()[off].Load() != nil {
		return false
	}
	leaf.items()[off].Store(item, x.mu.Confined())
	setBit(leaf, off, present)
	if h == nil || h.root != root {
		x.head.Store(newTreeHead(root, height), x.mu.Confined())
	}
	x.count++
	return true
}

// grow returns a root of at least height need for the tree in h, in the
// manner of xas_expand (v4.20+): a lone item moves into a new leaf at slot 0,
// and new top nodes are stacked above the old root, each holding it at slot 0
// with its marks. An empty tree gets a fresh root of height need. The new
// nodes are not yet visible to readers; the caller publishes a head for
// them. Caller holds x.mu.
func (x *XArray[T]) grow(h *xaHead[T], need int) (*xaNode[T], int) {
	if h == nil {
		return x.newNode(nil, 0, chunkShift*uint(need-1)), need
	}
	root, height := h.root, h.height
	if root == nil {
		root, height = x.newNode(nil, 0, 0), 1
		root.items()[0].Store(h.lone, x.mu.Confined())
		root.bits[present] = 1
		for m := range NumMarks {
			root.bits[m] = uint64(x.loneMarks>>m) & 1
		}
		x.loneMarks = 0
	}
	for ; height < need; height++ {
		top := x.newNode(nil, 0, chunkShift*uint(height))
		top.children[0].Store(root, x.mu.Confined())
		for b, word := range root.bits {
			if word != 0 {
				top.bits[b] = 1
			}
		}
		root.parent = top
		root = top
	}
	return root, height
}

// pathTo returns the leaf for index under root (of the given height),
// creating missing nodes on the way (xas_create). A new node is fully built
// before it is stored in its parent's slot. Caller holds x.mu.
func (x *XArray[T]) pathTo(root *xaNode[T], height int, index uint64) *xaNode[T] {
	if x.hint != nil && index&^chunkMask == x.hintBase {
		return x.hint // linked in the tree: under root, which grow only stacks nodes above
	}
	n := root
	for shift := chunkShift * uint(height-1); shift > 0; shift -= chunkShift {
		off := (index >> shift) & chunkMask
		child := n.children[off].Load()
		if child == nil {
			child = x.newNode(n, off, shift-chunkShift)
			n.children[off].Store(child, x.mu.Confined())
			n.bits[present] |= 1 << off
		}
		n = child
	}
	x.hint, x.hintBase = n, index&^chunkMask
	return n
}

// Delete removes item from index if and only if index is the first index of
// the entry holding exactly item, clears its marks, frees nodes left empty and
// shrinks the tree, and reports whether it did. A multi-index entry loses
// all its slots. Models page_cache_delete (xas_store(NULL) and
// xas_init_marks, v5.x–v6.x) with xas_delete_node / xas_shrink: a tree whose
// top node only uses slot 0 loses that level, and a tree holding only index 0
// keeps that item lone in the head. Detached nodes are left intact so that
// a reader still inside them sees either nil or the item of its own index.
// O(height + 2^order); allocates a head record only when the shape changes.
func (x *XArray[T]) Delete(index uint64, item *T) bool {
	if item == nil {
		return false
	}
	x.mu.Lock()
	ok := x.delete(index, item)
	x.mu.Unlock() // not deferred, as in InsertOrder
	return ok
}

// delete is Delete's work under x.mu, item not nil.
func (x *XArray[T]) delete(index uint64, item *T) bool {
	cur, marks, leaf, off := x.locate(index)
	if cur != item || !x.first(leaf, off, index, item) {
		return false
	}
	x.changeMarks(leaf, off, marks, 0)
	x.count--
	if leaf == nil { // the lone item
		x.head.Store(nil, x.mu.Confined())
		return true
	}
	if x.multi == 0 { // an order-0 entry: one slot
		leaf.items()[off].Store(nil, x.mu.Confined())
		x.prune(leaf, 1<<off)
		return true
	}
	if x.clearEntry(leaf, index, item) > 1 {
		x.multi--
	}
	return true
}

// first reports whether the slot at (leaf, off), index index, holding item,
// is the first slot of item's entry: index 0, or a previous slot holding
// something else; always when the array holds no multi-index entry. Caller
// holds x.mu. O(1), or O(height) at a leaf's slot 0.
func (x *XArray[T]) first(leaf *xaNode[T], off, index uint64, item *T) bool {
	switch {
	case x.multi == 0 || leaf == nil || index == 0:
		return true
	case off > 0:
		return leaf.items()[off-1].Load() != item
	}
	prev, _, _, _ := x.locate(index - 1)
	return prev != item
}

// clearEntry empties every slot of item's entry from index, whose leaf is
// leaf, leaf by leaf, pruning each leaf it leaves empty, and returns the
// slots it emptied. Caller holds x.mu.
func (x *XArray[T]) clearEntry(leaf *xaNode[T], index uint64, item *T) int {
	n := 0
	for {
		off := index & chunkMask
		var cleared uint64
		for ; off < chunkSize && leaf.items()[off].Load() == item; off++ {
			leaf.items()[off].Store(nil, x.mu.Confined())
			cleared |= 1 << off
			n++
		}
		x.prune(leaf, cleared)
		if off < chunkSize || index|chunkMask == ^uint64(0) {
			return n
		}
		index = index | chunkMask + 1
		if _, _, leaf, _ = x.locate(index); leaf == nil || leaf.items()[0].Load() != item {
			return n
		}
	}
}

// prune marks the slots in the bitmap offs of leaf empty, unlinks every node
// that this leaves without occupied slots (bottom up), then shrinks the
// tree. Caller holds x.mu.
func (x *XArray[T]) prune(leaf *xaNode[T], offs uint64) {
	n := leaf
	n.bits[present] &^= offs
	if n.bits[present] == 0 && n == x.hint {
		x.hint = nil // about to be unlinked
	}
	for n.bits[present] == 0 {
		x.nodes--
		p := n.parent
		if p == nil {
			x.head.Store(nil, x.mu.Confined())
			return
		}
		p.children[n.offset].Store(nil, x.mu.Confined())
		p.bits[present] &^= 1 << n.offset
		n = p
	}
	x.shrink()
}

// Split replaces the entry of the given order at index, holding exactly item,
// by 1 << (order − newOrder) entries of order newOrder, part(k) the k-th
// from index; every part gets the marks the entry had (see Index.Split).
// Each slot changes with one atomic store, so a lock-free reader sees the
// old item or the part of its own index. Models xas_split (v5.17+) as
// __split_unmapped_folio uses it. O(2^order), no allocation.
func (x *XArray[T]) Split(index uint64, item *T, order, newOrder uint8, part func(k int) *T) bool {
	if item == nil || newOrder >= order || order >= 64 {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	cur, marks, leaf, off := x.locate(index)
	size := uint64(1) << order
	if cur != item || leaf == nil || !x.first(leaf, off, index, item) {
		return false
	}
	if end, _, _, _ := x.locate(index + size - 1); end != item {
		return false
	}
	if after, _, _, _ := x.locate(index + size); index+size != 0 && after == item {
		return false
	}
	step := uint64(1) << newOrder
	for k := uint64(0); k < size>>newOrder; k++ {
		p := part(int(k))
		if p == nil {
			panic("pageindex: Split with a nil part")
		}
		at := index + k*step
		for j := uint64(0); j < step; j++ {
			_, _, l, o := x.locate(at + j)
			l.items()[o].Store(p, x.mu.Confined())
		}
		if k > 0 {
			_, _, l, o := x.locate(at)
			x.changeMarks(l, o, 0, marks)
		}
	}
	x.count += int(size>>newOrder) - 1
	if newOrder > 0 {
		x.multi += int(size>>newOrder) - 1
	} else {
		x.multi--
	}
	return true
}

// shrink removes top levels while the root uses only slot 0, and moves the
// item at index 0 into the head when it is the only one left (xas_shrink,
// v4.20+). The detached root keeps its slot 0 pointer, so a reader that
// started from the old head still reaches the same subtree. Caller holds
// x.mu; the tree is not empty.
func (x *XArray[T]) shrink() {
	h := x.head.Load()
	root, height := h.root, h.height
	for root.bits[present] == 1 {
		x.nodes--
		if height == 1 {
			x.hint = nil // the root was the only leaf
			for m := range NumMarks {
				x.loneMarks |= uint8(root.bits[m]&1) << m
			}
			x.head.Store(&xaHead[T]{lone: root.items()[0].Load()}, x.mu.Confined())
			return
		}
		root = root.children[0].Load()
		root.parent = nil
		height--
	}
	if root != h.root {
		x.head.Store(newTreeHead(root, height), x.mu.Confined())
	}
}

// Confine makes the writer lock confined (conc.Mutex.Confine): one goroutine
// at a time uses x from now on, and the writer's pointer stores are plain.
// Lookups stay lock-free atomic loads.
func (x *XArray[T]) Confine() { x.mu.Confine() }

// Len returns the number of items stored. O(1).
func (x *XArray[T]) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.count
}

// Height returns the current tree height: 0 when the array is empty or holds
// only a lone item at index 0, else the number of node levels (height h
// covers indices below 64^h). Lock-free, O(1).
func (x *XArray[T]) Height() int {
	if h := x.head.Load(); h != nil {
		return h.height
	}
	return 0
}

// Nodes returns the number of nodes linked into the tree (each 576 bytes on
// 64-bit, like the kernel's xa_node slab objects). O(1).
func (x *XArray[T]) Nodes() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.nodes
}
