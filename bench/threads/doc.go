// Package threads reproduces the four LKML threads bhsim is about, each on
// the model of the machine it was measured on: one [Thread] each in the
// registry ([All], [ByName]), one file each holding the thread's published
// data, its fit and what it reports, and one [Reproduction] type for all:
// the calibrated profile, the published table beside the simulated one, the
// tables derived from it, the calibration that labels every cell, the
// thread's own account of what the model counted, and its charts.
//
// The dd runs of the blocksize and iomap threads are on the engine's clock
// (workload.DD.OnClock): each cell is a run of dd as dd runs it, and
// fitting its costs reruns the fitted runs at every step. Those two threads
// therefore read the fit of their built-in profile, and its leave-one-out,
// from a record (fitted/<profile>.json and .cv.json, [Thread.RecordsFit];
// Options.Refit fits anew), and run every cell under it.
//
// # The set_init_blocksize revert (blocksize)
//
// Maxim Mikityanskiy bisected a write regression on a Helios4 NAS (two
// 1.6 GHz Cortex-A9 cores, four WD8003FFBX disks) to "block: simplify
// set_init_blocksize" (v5.9), which left a block device at its logical block
// size, 512 bytes, instead of growing it to 4096; the revert restored writes
// 1.5–3.5× faster, reads unchanged ("[PATCH] Revert "block: simplify
// set_init_blocksize" to regain lost performance", LKML 2021-01-26; taken
// for 5.11-rc6 and 5.10.13). The model runs his dd (bs=1M count=2000) for
// both policies on every column: one disk, raid0, raid10 far-2 and near-2,
// raid6 over four disks. With 512-byte buffers writeback submits eight bios
// per page instead of one; the member disks merge them back into requests,
// so the disks see much the same I/O, but every bio costs the block layer —
// and on md every bio also passes md_submit_bio, the personality and, for the
// redundant levels, the write bookkeeping, once per 512 bytes. The flusher's
// CPU becomes the bottleneck. Reads go through readahead in multi-page bios
// without buffer heads, so the block size does not touch them. Only the
// block-size policy of the table's kernels is modelled, so the older rows
// share the runs of the 5.10.10 rows and are labelled so.
//
// # The iomap writes to block devices (iomap)
//
// From v6.6 a buffered write to a block device goes through iomap
// (487c607df790) instead of generic_perform_write. Xu Yang (NXP) found dd's
// write speed falling as its bs grew, flat with the change reverted ("Re:
// [PATCH 5/6] block: use iomap for writes to block devices", LKML
// 2024-04-26; the fix became 4e527d5841e2).
// The model runs his dd for the three kernels and six block sizes on an
// assumed i.MX 8M Plus class board (the thread names neither SoC nor disk).
// The root cause, as the model counts it: iomap_write_iter takes chunks of
// PAGE_SIZE << MAX_PAGECACHE_ORDER (2 MiB) and pre-faults the whole of
// min(chunk − offset, bytes left of the write) of the user buffer before each
// iteration, but the block device's mapping has no large folios, so
// write_begin clamps the iteration to one 4 KiB page: every page written
// touches up to 512 user pages, more as bs grows. The fix (4e527d5841e2)
// makes the chunk mapping_max_folio_size, one page here: one touch per page.
//
// # The alloc_page_buffers circular list (alloc)
//
// Sean Fu (2017) proposed building a page's b_this_page list circular in
// alloc_page_buffers, sparing its callers the walk to the tail that closes
// the ring, and reported ext3 (1 KiB blocks) writing 800 MiB 16 % faster and
// reading it 11 % faster in system time ("Re: [PATCH] fs: buffer: Modify
// alloc_page_buffers.", LKML 2017-06-21); Al Viro asked whether the change
// could be observable at all. The model runs his writetest with both
// variants: per ring built, the tail walk — PAGE_SIZE / block-size steps —
// disappears, and that, priced, is the model's answer to Al Viro.
//
// # The per-CPU bh LRU (lru)
//
// Marcelo Tosatti measured 114 ns per __find_get_block(bdev, 1, 512) and
// 68 ns per __find_get_block_slow(bdev, 1) on /dev/loop0 and proposed
// removing the per-CPU LRU ("[PATCH] fs/buffer.c: remove per-CPU buffer_head
// lookup cache", LKML 2023-06-26). The model, run on his module as written,
// shows why the LRU lost: a loop device of an ordinary size gets 4 KiB
// blocks from set_init_blocksize's grow policy, and the LRU compares the
// size argument, so (bdev, 1, 512) never matches the 4096-byte buffer it
// holds. Every call scans all 16 slots, takes the slow path anyway, and
// re-installs the buffer: the test timed the LRU's miss cost on top of the
// slow path. One parameter is fitted, the harness cost of a timed call, to
// the 68 ns cell; the 114 ns cell is then predicted from documented costs
// (the Example shows the figure). Willy asked for a rerun at block 4UL<<30:
// on the same device that block does not exist; on a device large enough the
// slow path pays six xarray levels while an LRU hit would pay none.
package threads
