// Package pageindex is the page-cache index of bhsim's simulated
// address_space: the map from a page index (the kernel's pgoff_t) to the folio
// cached there, which Linux keeps in mapping->i_pages. Every buffered read and
// write, and every buffer_head lookup that misses the per-CPU bh LRU
// (__find_get_block_slow), starts with a lookup in this index. The package
// has two implementations behind the Index interface: XArray, a model of the
// kernel's own structure, and BTree, an alternative whose costs grow in a
// different way. It is generic over the item type so that it depends on
// nothing else in the module.
//
// # The xarray: a radix tree of 64-slot nodes
//
// Since v4.20 the page cache is an xarray (lib/xarray.c), which replaced, with
// the same layout, the radix tree of lib/radix-tree.c. A node has 64 slots
// (XA_CHUNK_SHIFT = 6) and so consumes six bits of the index: the root's
// slot is chosen by the highest six bits the tree covers, the next node's by
// the following six, and the bottom node's slots hold the folios. A tree of
// height h therefore covers exactly the indices below 64^h, and its height is
// set by the largest index it holds, not by how many it holds. With 4 KiB
// pages:
//
//	height  indices below     file offsets below
//	  1     64                256 KiB
//	  2     4096 (2^12)       16 MiB
//	  3     262 144 (2^18)    1 GiB
//	  4     2^24              64 GiB
//	  5     2^30              4 TiB
//	  6     2^36              256 TiB
//	  11    2^66, i.e. every 64-bit index
//
// A lookup walks one node per level, so its cost is the height. Two shortcuts
// make small mappings cheap. A mapping whose only cached page is index 0
// keeps that folio directly in the root pointer, xa_head, with no node at
// all: the lookup costs no node visit (height 0). And a lookup of an index
// above the range the current height covers is answered "absent" from the
// head, without visiting a node. The tree grows by stacking new roots above
// the old one (which becomes slot 0 of the new root) and shrinks, when the
// last item outside slot 0 of the root goes, by dropping the root; when only
// index 0 remains it moves back into the head. A node is 576 bytes on a 64-bit
// kernel (512 of slots, 64 of bookkeeping: seven nodes per 4 KiB page); this
// model's nodes take the same heap space (568 bytes in Go's 576-byte size
// class), and Nodes counts them for memory reports.
//
// # Lock-free lookup: RCU, and why Go's garbage collector gives the same
//
// In the kernel, readers (xa_load, via filemap_get_entry) take no lock: they
// run under rcu_read_lock and follow slot pointers that writers update with
// single stores while holding xa_lock. A writer that removes a node does not
// free it at once; it frees it after an RCU grace period, when no reader that
// could have seen it is left. So a reader racing with a writer sees the old
// value or the new one in every slot, and any node it reaches is still a node
// of that shape, never memory reused for something else.
//
// XArray.Load does the same with sync/atomic pointers: it loads an immutable
// head record (root, height, range, or the lone item) and follows atomic slot
// pointers. Writers serialise on a mutex, build every new node completely
// before storing a pointer to it, and publish a new head record only when the
// shape changes (growing, shrinking, moving the lone item). The grace period
// comes from the garbage collector: a node or item stays alive as long as
// any reader holds a pointer to it. Because this package never reuses a node
// for another part of the index space, a reader inside a node that was just
// unlinked sees either the item of its own index or nil; a detached root
// keeps its slot-0 pointer so a reader that started from the old head still
// reaches the same subtree. So, like an RCU reader, Load may return an item a
// concurrent Delete is removing, or miss one a concurrent Insert is adding,
// but never returns an item stored under another index. Load allocates
// nothing.
//
// # Marks: how writeback finds dirty pages
//
// Every slot carries three mark bits (XA_MARK_0..2), which the page cache
// names PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK and
// PAGECACHE_TAG_TOWRITE (MarkDirty, MarkWriteback, MarkToWrite here). A node
// keeps one 64-bit bitmap per mark, and a bit in an interior node is set iff
// some item in that slot's subtree has the mark. Dirtying a folio sets its
// dirty mark and the bits on the path up; writeback then walks only marked
// subtrees (xa_find with a mark, inside filemap_get_folios_tag and
// writeback_iter), so finding the next dirty page costs O(height) node steps
// however sparse the dirty pages are. Data-integrity writeback first copies
// dirty to towrite (tag_pages_for_writeback) and then writes the towrite
// pages, so that pages dirtied meanwhile cannot keep it busy for ever.
// CountMarked returns a mark's population in O(1), standing in for the
// kernel's NR_FILE_DIRTY / NR_WRITEBACK counters.
//
// Two calls serve the page cache's write path with one lock acquisition
// where separate calls would take several. UpdateMarks is the kernel's
// xa_lock section around a tag change: it checks that the slot still holds
// the caller's item, lets the caller change the item's own state (a folio's
// dirty or writeback flag) and sets and clears any of its marks, all in one
// critical section, so a flag and its tag change together for every reader
// of marks, and a folio removed and replaced at the same index cannot lose
// or take another's tag. FindMarked returns up to BatchSize marked items
// in index order, as filemap_get_folios_tag fills a folio_batch: writeback
// looks up fifteen dirty folios per lock acquisition instead of one.
//
// # The question this answers: block 4G
//
// In June 2023 Marcelo Tosatti proposed removing the per-CPU buffer_head LRU
// ("[PATCH] fs/buffer.c: remove per-CPU buffer_head lookup cache"), measuring
// 114 ns per __find_get_block against 68 ns per __find_get_block_slow, looking
// up block 1 of /dev/loop0 over and over. Dave Chinner observed that a
// lookaside cache only pays when a hit is much cheaper than a miss, and that
// "Peeking at 16 buffers to not find a match is just as expensive as walking
// 3-4 tree levels in an Xarray". Matthew Wilcox replied (Message-ID
// ZJoP4e6VPkJnvSAh@casper.infradead.org) that block 1 is
// the best case for both paths and asked for a rerun with block
// 4UL*1024*1024*1024. The reason is the table above: block 1 lies on page 0
// or 1 (512-byte or 4 KiB blocks), a lookup of 0 or 1 levels while nothing
// far into the device is cached, whereas 512-byte block 4G lies on page 2^29
// (2 TiB into the device) and costs five levels (six with 4 KiB blocks, page
// 2^32) in every lookup, even when it is the only cached page. The xarray's
// cost follows the index; the LRU's is the same for every block.
//
// # The btree alternative
//
// A B-tree (BTree, on github.com/google/btree) orders the cached pages by
// index and finds one with O(log n) comparisons in the number n of cached
// pages, whatever the index: one cached page at 2^29 is one node, and 4096
// cached pages are about three levels of a degree-32 tree. So the two
// structures disagree exactly where the thread's question lies, a few pages
// far into a large device, and the benchmarks put them side by side.
// google/btree does not expose its depth, so BTree reports a documented upper
// bound for Height and for the levels Load returns.
//
// # Large folios: multi-index entries
//
// From v5.17 the page cache holds folios of any order, and from v6.15 the
// block device's own mapping does too (its minimum order is the block size's,
// and writes and readahead allocate larger ones). A folio of order k is one
// entry over the 2^k indices from its first, which is a multiple of 2^k
// (InsertOrder); a lookup of any of those indices returns it, and Next from
// inside it returns it at once. Split replaces an entry by smaller ones, each
// taking its marks, as xas_split does when the kernel splits a large folio.
// The kernel keeps a canonical slot and sibling entries (or, for orders of 6
// and more, one slot of a higher node); the model stores the item in every
// slot the entry covers, so a lock-free Load finds it with the same descent
// as an order-0 item and the guarantee above holds for every index: a reader
// gets nil, the entry covering its index, or, during a Split, the part that
// covers it. Marks belong to the entry's first slot, as to the kernel's
// canonical one. Costs: inserting, deleting and splitting an entry are
// O(2^order) stores where the kernel's are O(2^(order mod 6)), and the model
// keeps the leaf nodes of entries of order 6 and more, which the kernel does
// not (Nodes counts them).
//
// # What is not modelled
//
// Value entries (shadow and swap entries), retry entries, and allocating
// xarrays are left out. Marks are writer state here (read under the writer
// mutex), whereas the kernel can also test them under RCU.
package pageindex
