package pageindex

import (
	"math/bits"
	"unsafe"

	"github.com/bhsim/bhsim/internal/conc"
)

const (
	// chunkShift models XA_CHUNK_SHIFT (6 unless CONFIG_BASE_SMALL): each tree
	// level consumes 6 bits of the index.
	chunkShift = 6
	// chunkSize models XA_CHUNK_SIZE: 64 slots per node.
	chunkSize = 1 << chunkShift
	// chunkMask selects a node's slot from the index bits at its shift.
	chunkMask = chunkSize - 1
	// present is the bitmap (after the NumMarks mark bitmaps) whose bit i says
	// that slot i of a node is occupied.
	present = int(NumMarks)
	// numBitmaps is the number of per-node bitmaps: one per mark plus present.
	numBitmaps = int(NumMarks) + 1
)

// xaNode is the part of a tree node that both kinds of node share; it plays
// the role of struct xa_node (include/linux/xarray.h). It is the first field
// of the node allocated, an xaInterior or an xaLeaf, and shift says which:
// an interior node's children is set, and a leaf's slots are reached by
// position (items), so that a lookup reads the slot without first reading
// the header, and a reader that needs both (a mark's update) reads them at
// once rather than one after the other: two dependent host cache misses per
// random lookup become one. shift and children are set when the node is
// built and before it is published, and never change, so lock-free readers
// may follow them. The slots are atomic. All other fields belong to the
// writer (they are read and written only under XArray.mu).
//
// The header is 56 bytes and the slot array 512, so a node is 568 bytes on
// 64-bit machines, allocated in Go's 576-byte size class: the kernel's
// xa_node is 576 bytes.
type xaNode[T any] struct {
	// children is the slot array of an interior node (nil in a leaf).
	children *[chunkSize]conc.Pointer[xaNode[T]]
	// parent is the node whose slot offset points here; nil for the root.
	parent *xaNode[T]
	// bits holds, per mark, bit i set iff some item in the subtree of slot i
	// carries the mark (xa_node.marks), and at index present bit i set iff
	// slot i is occupied (xa_node.count, kept as a bitmap so searches skip
	// empty slots with one instruction).
	bits [numBitmaps]uint64
	// offset is this node's slot number in parent (xa_node.offset).
	offset uint8
	// shift is the number of index bits below this node's slots
	// (xa_node.shift): 0 in a leaf.
	shift uint8
}

// items is leaf n's slot array. Precondition: n.shift == 0, so n is the
// header of an xaLeaf (newNode allocates every leaf as one). O(1); it reads
// nothing.
func (n *xaNode[T]) items() *[chunkSize]conc.Pointer[T] {
	return &(*xaLeaf[T])(unsafe.Pointer(n)).slots
}

// xaInterior is an interior node: its slots point to the nodes one level down.
type xaInterior[T any] struct {
	xaNode[T]
	slots [chunkSize]conc.Pointer[xaNode[T]]
}

// xaLeaf is a bottom-level node: its slots hold the items.
type xaLeaf[T any] struct {
	xaNode[T]
	slots [chunkSize]conc.Pointer[T]
}

// newNode allocates a node for the level at shift (a leaf when shift is 0)
// as child offset of parent, and counts it. The node is one allocation: its
// header is its first field. Models xas_alloc (v4.20+).
func (x *XArray[T]) newNode(parent *xaNode[T], offset uint64, shift uint) *xaNode[T] {
	x.nodes++
	var n *xaNode[T]
	if shift == 0 {
		n = &(&xaLeaf[T]{}).xaNode
	} else {
		in := &xaInterior[T]{}
		in.children = &in.slots
		n = &in.xaNode
	}
	n.parent, n.offset, n.shift = parent, uint8(offset), uint8(shift)
	return n
}

// heightFor returns the smallest tree height (>= 1) whose range covers index:
// height h covers indices below 64^h.
func heightFor(index uint64) int {
	return max(1, (bits.Len64(index)+chunkShift-1)/chunkShift)
}

// maxIndexFor returns the largest index a tree of height h covers, 64^h − 1.
// For h = 11 the shift is 66 bits; Go defines 1<<66 on a uint64 as 0, so the
// result is math.MaxUint64 as required.
func maxIndexFor(h int) uint64 {
	return uint64(1)<<(chunkShift*uint(h)) - 1
}

// setBit sets bit off of bitmap b in n and in every ancestor whose bit for the
// subtree is not yet set (xas_set_mark's upward walk).
func setBit[T any](n *xaNode[T], off uint64, b int) {
	for {
		if n.bits[b]&(1<<off) != 0 {
			return
		}
		n.bits[b] |= 1 << off
		if n.parent == nil {
			return
		}
		off, n = uint64(n.offset), n.parent
	}
}

// clearBit clears bit off of bitmap b in n and, while that leaves a node's
// bitmap empty, the bit for that node in its parent (xas_clear_mark's upward
// walk).
func clearBit[T any](n *xaNode[T], off uint64, b int) {
	for {
		n.bits[b] &^= 1 << off
		if n.bits[b] != 0 || n.parent == nil {
			return
		}
		off, n = uint64(n.offset), n.parent
	}
}
