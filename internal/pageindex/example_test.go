package pageindex_test

import (
	"fmt"

	"github.com/bhsim/bhsim/internal/pageindex"
)

// folio stands in for the page cache's folio: it remembers its page index.
type folio struct{ index uint64 }

// The xarray's lookup cost follows the largest index cached: storing page
// 2^29 (512-byte block 4G) makes every lookup, even of page 1, walk five
// levels. Deleting it shrinks the tree again.
func ExampleXArray() {
	x := pageindex.NewXArray[folio]()
	show := func(what string, page uint64) {
		_, levels := x.Load(page)
		fmt.Printf("%-16s height %d, nodes %2d, Load(%d) walks %d levels\n",
			what, x.Height(), x.Nodes(), page, levels)
	}
	pages := []uint64{0, 1, 4096, 1 << 29}
	folios := map[uint64]*folio{}
	for _, p := range pages {
		folios[p] = &folio{index: p}
		x.Insert(p, folios[p])
		show(fmt.Sprintf("+page %d", p), p)
	}
	show("now", 1)
	x.SetMark(4096, pageindex.MarkDirty)
	i, f, _ := x.NextMarked(0, pageindex.MarkDirty)
	fmt.Printf("first dirty page %d (folio of page %d), %d dirty\n", i, f.index, x.CountMarked(pageindex.MarkDirty))
	x.Delete(1<<29, folios[1<<29])
	show("-page 536870912", 1)
	x.Delete(4096, folios[4096])
	x.Delete(1, folios[1])
	show("-pages 4096, 1", 0)
	// Output:
	// +page 0          height 0, nodes  0, Load(0) walks 0 levels
	// +page 1          height 1, nodes  1, Load(1) walks 1 levels
	// +page 4096       height 3, nodes  5, Load(4096) walks 3 levels
	// +page 536870912  height 5, nodes 11, Load(536870912) walks 5 levels
	// now              height 5, nodes 11, Load(1) walks 5 levels
	// first dirty page 4096 (folio of page 4096), 1 dirty
	// -page 536870912  height 3, nodes  5, Load(1) walks 3 levels
	// -pages 4096, 1   height 0, nodes  0, Load(0) walks 0 levels
}

// Both implementations behind one interface: the xarray's depth follows the
// page index, the btree's the number of cached pages.
func ExampleNew() {
	for _, k := range []pageindex.Kind{pageindex.KindXArray, pageindex.KindBTree} {
		idx := pageindex.New[folio](k)
		for p := uint64(1 << 29); p < 1<<29+4096; p++ {
			idx.Insert(p, &folio{index: p})
		}
		_, levels := idx.Load(1 << 29)
		fmt.Printf("%-6s 4096 pages from 2^29: %d items, Load walks %d levels\n", k, idx.Len(), levels)
	}
	// Output:
	// xarray 4096 pages from 2^29: 4096 items, Load walks 5 levels
	// btree  4096 pages from 2^29: 4096 items, Load walks 3 levels
}
