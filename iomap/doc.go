// Package iomap models the iomap buffered write path as block devices use it
// from Linux 6.6, and reproduces the regression Xu Yang reported against it
// (the iomap-vs-buffer_head thread): dd to a block device got slower the larger its bs.
//
// # The kernel concept
//
// A file system's get_block callback maps one buffer_head, one block, per
// call. iomap replaces it with extents: ->iomap_begin ([Ops].Begin) returns a
// struct iomap ([IOMap]: inode offset, length, disk address, [Type], [Flags])
// covering as much of the range as it can, and iomap_iter ([Iter]) walks an
// operation over a range one extent at a time — process what the mapping
// covers, advance by what was processed, stop when done, when nothing was
// processed, or on an error, ->iomap_end's included.
//
// Block devices switched their buffered writes to it in 6.6: 487c607df790
// ("block: use iomap for writes to block devices", Christoph Hellwig). With
// CONFIG_BUFFER_HEAD the device keeps its buffer_heads: blkdev_iomap_begin
// ([BlkdevIomapBegin]) returns one identity mapping from the position (aligned
// down to the logical block size) to the end of the device, flagged
// IOMAP_F_BUFFER_HEAD, so iomap_write_begin prepares each page with
// __block_write_begin_int and iomap_to_bh as the get_block step, and writeback
// is the same buffer_head writeback as before. [BlkdevWrite] selects this path
// ([PathIomap]) or the old generic_perform_write ([PathBufferHead],
// bufcache.BlockDevice.Write) and makes blkdev_write_iter's checks.
//
// # Xu Yang's regression, step by step
//
// Xu Yang (NXP, April 2024) measured dd if=/dev/zero of=/dev/sda, 4 GiB per
// run, on an arm64 board with 4 KiB pages and transparent huge pages: 334,
// 278, 204, 170, 150, 139 MB/s for bs = 400K, 800K, 1600K, 2200K, 3000K,
// 4500K, and a flat ~333 MB/s with 487c607df790 reverted. The cause:
//
//  1. iomap_write_iter ([FileBufferedWrite]) works in chunks of PAGE_SIZE <<
//     MAX_PAGECACHE_ORDER (5d8edfb900d5, "iomap: Copy larger chunks from
//     userspace", v6.6; [ChunkMaxPagecacheOrder]). MAX_PAGECACHE_ORDER is
//     HPAGE_PMD_ORDER = 9 with THP on 4 KiB pages ([MaxPagecacheOrder]), so
//     the chunk is 2 MiB.
//  2. Each iteration takes offset = pos & (chunk−1) and bytes = min(chunk −
//     offset, bytes left in the write(2)), and pre-faults `bytes` of the user
//     buffer: fault_in_iov_iter_readable touches one byte in every user page
//     of that range.
//  3. Then iomap_write_begin clamps the write to one page, because the block
//     device's mapping has no large folios (before 6.15), and the iteration
//     copies at most 4 KiB.
//  4. So the next iteration pre-faults again, from 4 KiB further on: writing
//     the k-th page of a 2 MiB window touches the 512 − k user pages left in
//     the window, or fewer if the write(2) ends sooner. Per page written the
//     pre-fault touches the user pages of min(rest of the window, rest of the
//     write): the larger dd's bs, the more of each window is left to
//     pre-fault, quadratically in the part of a window one write covers.
//  5. Before 6.6, generic_perform_write pre-faulted only the bytes of the page
//     it copied: one user page per page (two if unaligned).
//
// The model counts it (EvFaultInPage per touched page, EvWriteIter per page
// copied). One 4500 KiB write at position 0 copies 1125 pages and touches
// 2·(512·513/2) + 101·102/2 = 267807 user pages, 238 per page. Over Xu Yang's
// whole runs (dd's consecutive positions, its buffer reused) 6.6 touches
// 47.2, 87.5, 148.5, 177.1, 198.3 and 217.6 user pages per page written for
// bs = 400K … 4500K; the reverted and the fixed kernels 1.0 for every bs. How
// many of those touches a CPU can afford before it, not the disk, sets the
// speed is the timing model's business (package bench/timing).
//
// # The fix
//
// Xu Yang first proposed clamping `bytes` to the page before the pre-fault;
// Matthew Wilcox asked for numbers and suggested adjusting the chunk instead.
// Merged in June 2024 and sent to stable: 79c137454815 ("filemap: add helper
// mapping_max_folio_size()") and 4e527d5841e2 ("iomap: fault in smaller
// chunks for non-large folio mappings"): chunk = mapping_max_folio_size,
// which is PAGE_SIZE for a mapping without large folios
// ([ChunkMappingMaxFolioSize]). With it Xu Yang measured 339, 330, 332, 333,
// 333, 333 MB/s.
//
// # Variants and versions
//
// [Options] bundles what differs: the write path, the chunk policy, THP and
// the 2024 cap of MAX_PAGECACHE_ORDER at 11 (099d90642a71), and
// blkdev_iomap_begin's end-of-device check: the original compares the
// aligned-down offset with i_size ([EOFAligned]); 0c12028aec83 ("block:
// refine the EOF check in blkdev_iomap_begin", v6.10) compares the raw offset
// ([EOFRaw]). They differ only on a device whose size is not a multiple of
// its logical block size.
//
// iomap_write_iter is modelled as released in v6.6, which includes
// 3ac974796e5d ("iomap: fix short copy in iomap_write_iter()", v6.6-rc7): a
// copy that write_end refuses halves the chunk and retries at once with the
// bytes that were copied (the retry label), which avoids the endless loop of
// 5d8edfb900d5 on a partly unreadable buffer.
//
// # Large folios (v6.15+)
//
// From 6.15 the block device's mapping has large folios (bufcache.FoliosLarge):
// iomap_write_begin no longer clamps a write to the page but asks
// __filemap_get_folio for a folio sized by it (fgf_set_order: order
// ilog2(len) − PAGE_SHIFT, up to MAX_PAGECACHE_ORDER, aligned, at least the
// minimum order of the block size), trims the write to the folio it gets
// (iomap_trim_folio_range) and prepares its buffers with
// __block_write_begin_int over the whole range; mapping_max_folio_size is
// then 2 MiB on 4 KiB pages, so ChunkMappingMaxFolioSize gives 2 MiB chunks
// that each fill one folio: a 1 MiB pwrite is one round, one order-8 folio
// and 256 user pages faulted in once, as the host's 6.18 shows
// (testdata/kernel/6.18/pwrite-no-io-before-fsync). [Linux618] is 6.18's
// write and [Writer] makes any Options bufcache's Config.WriteIter, the
// write File.Pwrite uses.
//
// Not modelled: the non-buffer_head iomap path (iomap_folio_state), inline data, holes,
// delayed allocation and unwritten extents in iomap_to_bh, srcmap, NOWAIT,
// folio_ops and stale mappings, fatal signals. Where the kernel would BUG or
// loop for ever on a bad mapping from an [Ops], the model returns
// [ErrInvalidMapping]; its WARNs are counted as bufcache.EvWarning.
//
// # Layering
//
// iomap sits above bufcache and uses its extension points
// (bufcache/iomap_hooks.go): the write_begin folio, __block_write_begin_int
// with a supplied get_block step (bufcache.BlockMapper), write_end, the
// user-buffer fault-in, copy and revert, balance_dirty_pages. Every step is
// the code bufcache's own write path runs, so both paths count the same
// events for the same work, and EvIomapBegin counts the iomap rounds.
// BenchmarkIomapWrite runs Xu Yang's sweep in real Go time.
package iomap
