package pageindex

import "fmt"

// check verifies every structural invariant of the xarray and returns the
// first violation: the head's shape, the no-shrinkable-root rule, parent
// links, occupancy and mark bitmaps, and the item, node and mark counters.
// It is the invariant checker the tests switch on after each operation.
func (x *XArray[T]) check() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.head.Load()
	var c counts
	switch {
	case h == nil:
	case h.root == nil:
		if h.lone == nil || h.height != 0 || h.maxIndex != 0 {
			return fmt.Errorf("lone head %+v", *h)
		}
		c.items = 1
		for m := range NumMarks {
			c.marked[m] = int(x.loneMarks>>m) & 1
		}
	default:
		if x.loneMarks != 0 {
			return fmt.Errorf("lone marks %b on a tree", x.loneMarks)
		}
		if h.height < 1 || h.maxIndex != maxIndexFor(h.height) || h.shift != chunkShift*uint(h.height-1) {
			return fmt.Errorf("head shape: height %d maxIndex %#x shift %d", h.height, h.maxIndex, h.shift)
		}
		if h.root.parent != nil {
			return fmt.Errorf("root has a parent")
		}
		if h.root.bits[present] == 1 {
			return fmt.Errorf("root uses only slot 0: the tree should have shrunk")
		}
		if err := checkNode(h.root, h.shift, 0, &c); err != nil {
			return err
		}
	}
	if c.items != x.count || c.nodes != x.nodes || c.marked != x.marked {
		return fmt.Errorf("counters: walked %+v, kept items %d nodes %d marked %v", c, x.count, x.nodes, x.marked)
	}
	if x.hint != nil { // the writers' leaf hint is the leaf a descent to its base reaches now
		if h == nil || h.root == nil || x.hintBase&chunkMask != 0 || x.hintBase > h.maxIndex {
			return fmt.Errorf("leaf hint at %#x on a tree without it", x.hintBase)
		}
		if leaf, _ := descend(h, x.hintBase); leaf != x.hint || leaf.shift != 0 {
			return fmt.Errorf("leaf hint at %#x is not the tree's leaf there", x.hintBase)
		}
	}
	return nil
}

// counts is what check tallies while walking the tree: entries (a run of
// slots holding the same item counts once), nodes and marks, and the item
// of the last occupied slot walked.
type counts struct {
	items, nodes int
	marked       [NumMarks]int
	prev         any
}

// checkNode verifies the subtree of n, which sits at shift and covers indices
// starting at base, and adds its items, nodes and marks to c.
func checkNode[T any](n *xaNode[T], shift uint, base uint64, c *counts) error {
	c.nodes++
	if n.bits[present] == 0 {
		return fmt.Errorf("empty node at %#x shift %d left in the tree", base, shift)
	}
	if uint(n.shift) != shift || (shift == 0) == (n.children != nil) {
		return fmt.Errorf("node at %#x shift %d has the wrong slot array", base, shift)
	}
	for off := range uint64(chunkSize) {
		bit := uint64(1) << off
		occupied := n.bits[present]&bit != 0
		if shift == 0 {
			item := n.items()[off].Load()
			if occupied != (item != nil) {
				return fmt.Errorf("leaf %#x slot %d: present bit %v, item %v", base, off, occupied, item != nil)
			}
			first := false
			if occupied {
				first = c.prev != any(item)
				if first {
					c.items++
				}
				c.prev = item
			} else {
				c.prev = nil
			}
			for m := range NumMarks {
				if n.bits[m]&bit != 0 {
					if !first {
						return fmt.Errorf("leaf %#x slot %d: mark %d on a slot that starts no entry", base, off, m)
					}
					c.marked[m]++
				}
			}
			continue
		}
		child := n.children[off].Load()
		if child == nil {
			c.prev = nil
		}
		if occupied != (child != nil) {
			return fmt.Errorf("node %#x slot %d: present bit %v, child %v", base, off, occupied, child != nil)
		}
		if child == nil {
			for m := range NumMarks {
				if n.bits[m]&bit != 0 {
					return fmt.Errorf("node %#x slot %d: mark %d over an empty slot", base, off, m)
				}
			}
			continue
		}
		if child.parent != n || uint64(child.offset) != off {
			return fmt.Errorf("node %#x slot %d: child's parent link is wrong", base, off)
		}
		for m := range NumMarks {
			if (n.bits[m]&bit != 0) != (child.bits[m] != 0) {
				return fmt.Errorf("node %#x slot %d: mark %d bit %v but subtree marks %#x", base, off, m, n.bits[m]&bit != 0, child.bits[m])
			}
		}
		if err := checkNode(child, shift-chunkShift, base|off<<shift, c); err != nil {
			return err
		}
	}
	return nil
}
