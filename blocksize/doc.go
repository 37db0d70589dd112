// Package blocksize models the block size of a Linux block device's own page
// cache: the arithmetic that maps block numbers to pages, the rules that say
// which block sizes are legal, and the two historical variants of
// set_init_blocksize, the function that picks the block size when a device
// is first opened.
//
// # i_blkbits: the block size of a block device
//
// A block device such as /dev/sda has an inode of its own, and reads and
// writes that go through the device node (dd to /dev/sda or /dev/md0, mkfs,
// a filesystem's metadata read with sb_bread) are cached in that inode's page
// cache. Each cached page is cut into equal blocks, and
// each block is described by a buffer_head: a small structure saying which
// disk block the bytes belong to and whether they are up to date, dirty or
// under I/O. The blocks of one page hang off it in a circular list, the
// page's ring. The size of those blocks is the inode's i_blkbits, stored as a
// shift: 9 for 512 bytes, 12 for 4 KiB. [Geometry] holds PAGE_SHIFT and
// i_blkbits and does the arithmetic the kernel does with them: block b lives
// on page b >> (PAGE_SHIFT - i_blkbits), at position b mod
// (PAGE_SIZE >> i_blkbits) of the ring. A block number is a [Block] and a
// page-cache index a [PageIndex], two types, so that the compiler tells one
// from the other (and both from a 512-byte sector, a plain number of the
// block layer's).
//
// A block size must be a power of two, at least 512 bytes (one sector), at
// most PAGE_SIZE (up to v6.14; 64 KiB from v6.15) and at least the device's
// logical block size, the smallest unit the device can address
// ([ValidateBlocksize] models the checks of set_blocksize, which a
// filesystem calls through sb_set_blocksize at mount time to match its own
// block size, and BLKBSZSET from user space; [Rules] selects the version).
// When nothing has called set_blocksize, the block size is whatever
// set_init_blocksize chose at the first open ([Policy]).
//
// # Blocks larger than a page (v6.15+)
//
// Linux 6.15 lets a block device's block size exceed PAGE_SIZE: Luis
// Chamberlain's series ("block: enable large block sizes", built on the
// page cache's minimum folio order of 6.12) makes set_blocksize call
// bdev_validate_blocksize — blk_validate_block_size (a power of two from 512
// to BLK_MAX_BLOCK_SIZE, 64 KiB, [MaxBlockSize]) and the logical block size —
// and, on a change, sync the device, truncate its page cache, set i_blkbits
// and the mapping's minimum folio order, get_order(size) ([MinFolioOrder]:
// 1 for 8 KiB on 4 KiB pages, 4 for 64 KiB), and truncate again.
// set_init_blocksize sets the minimum order too, though its doubling loop
// still stops at PAGE_SIZE, so a first open never gives more than a page.
// [RulesLarge] is that rule set and [RulesPageSize] the older one; a kernel
// preset picks one. A block larger than a page lives in one folio of the
// minimum order, its single buffer_head spanning the folio's pages, and
// [Geometry] maps such blocks to pages with the kernel's byte arithmetic
// ((loff_t)block << i_blkbits) / PAGE_SIZE; [Rules.Geometry] builds one. The
// host's Linux 6.18 accepts 8K, 16K, 32K and 64K through BLKBSZSET and
// refuses 128K with EINVAL (testdata/kernel/6.18/bszset-*).
//
// # Why the block size of the device's page cache matters
//
// With 4 KiB pages, 512-byte blocks give 8 buffer_heads per page (the
// kernel's MAX_BUF_PER_PAGE); 4 KiB blocks give 1. Every buffered write
// through the device node walks its page's ring when it prepares and commits
// the write, and writeback (__block_write_full_page) submits one bio per
// dirty buffer_head. A 1 MiB dd write therefore becomes 256 bios of 4 KiB
// with 4 KiB blocks but 2048 bios of 512 bytes with 512-byte blocks: eight
// times the per-buffer and per-bio CPU work, which the block layer then has
// to merge back into large requests. On a fast CPU this hides behind the
// disk; on a slow one it becomes the bottleneck. Reads do not pay it: block
// device readahead (mpage) maps whole pages and packs contiguous ones into
// large bios without attaching buffer_heads, so read throughput does not
// depend on i_blkbits.
//
// # The two variants of set_init_blocksize
//
// [PolicyGrow] starts at the logical block size and doubles it while it is
// below PAGE_SIZE and the device size is a multiple of the doubled size: a
// 512e disk (512-byte logical, 4 KiB physical sectors) whose size is a
// multiple of 4 KiB gets 4 KiB blocks. This was the behaviour of bd_set_size
// before v5.0, of set_init_blocksize after Jan Kara split it out in
// 04906b2f542c ("blockdev: Fix livelocks on loop device", ≈v5.0), and it is
// the behaviour again from the revert to this day.
//
// [PolicyLogical] is Christoph Hellwig's 5ff9f19231a0 ("block: simplify
// set_init_blocksize", merged for v5.9): the block size is simply the logical
// block size, so the same 512e disk gets 512-byte blocks and 8 buffer_heads
// per page. It shipped in v5.9 and v5.10 up to 5.10.12.
//
// # The thread this package answers
//
// Maxim Mikityanskiy, "[PATCH] Revert "block: simplify set_init_blocksize" to
// regain lost performance", linux-block/linux-fsdevel/LKML, 26 January 2021
// (Message-Id <20210126195907.2273494-1-maxtram95@gmail.com>). He bisected a
// write regression on a Helios4 NAS (dual Cortex-A9 ARMv7 at 1.6 GHz, 4 KiB
// pages) with four WD8003FFBX disks (8 TB, 512 logical / 4096 physical, size
// 8,001,563,222,016 bytes = 4096 × 1,953,506,646) to 5ff9f19231a0. With dd
// bs=1M count=2000, writes under the simplified variant were 1.5 to 3.5 times
// slower than with the revert (single disk 149 → 247 MB/s on 5.10.10, RAID10
// 64 → 220 MB/s: more on RAID, whose tests Maxim notes are not disk-bound on
// this board), while reads were unchanged (256 vs 255 MB/s on the single disk).
// Jens Axboe applied it for v5.11 ("Can't argue with these numbers") as
// 8dc932d3e8af, Acked-by Christoph Hellwig, and it went to 5.10.y stable
// (5.10.13). Jens's remark that this "should probably get fixed up instead"
// was never acted on: the doubling loop is still in block/bdev.c.
//
// # A hazard: getblk's size must equal 1 << i_blkbits
//
// The kernel computes a block's page from two different inputs: the lookup
// (__find_get_block_slow) uses i_blkbits, while the allocation side
// (grow_buffers, called by __getblk_slow on a miss) uses the size the caller
// passed to getblk. If the two disagree, grow_buffers creates buffers on a
// page the lookup never searches, the lookup misses again, and __getblk_slow
// loops for ever. syzbot reports of this livelock (analysed by Tetsuo Handa,
// May 2019) are why set_init_blocksize must not run under a mounted
// filesystem, which is why it runs only at the first open, and why any change
// of i_blkbits writes back and then throws away the device's whole page
// cache. In this
// model a caller should derive both the lookup and the allocation from one
// [Geometry] and reject a getblk whose size is not [Geometry.BlockSize].
//
// # What is and is not modelled
//
// Sizes and page sizes are validated ([ValidatePageSize] accepts powers of two
// from 4 KiB to 64 KiB), under either rule set. The large folios the v6.15
// rules need are the page cache's (package bufcache). The geometry,
// validation and policy functions are O(1) and allocate nothing on success,
// so a simulation can call them on every lookup.
package blocksize
