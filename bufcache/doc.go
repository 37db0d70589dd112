// Package bufcache models the Linux block-device page cache and its
// buffer_heads: the machinery behind sb_bread, dd to /dev/sdX and every
// filesystem's metadata reads.
//
// # The objects
//
// A [BlockDevice] is a block device and its inode. Its [Mapping] is the
// inode's page cache: an index (an xarray-style radix tree by default, or a
// B-tree, see internal/pageindex) from page index to [Folio]. A folio spans
// one page in the kernels up to v6.14 and 1 << order pages from v6.15
// ([FoliosLarge]: one multi-index entry covering them all). A folio that is
// used through buffers carries a ring of [BufferHead]s, one per block of
// 1 << i_blkbits bytes of the folio, linked by b_this_page: 8 buffers per
// 4 KiB page with 512-byte blocks, 1 with 4 KiB blocks, 256 on a 1 MiB folio
// with 4 KiB blocks, 1 on an order-4 folio with 64 KiB blocks. The device's
// block size is chosen when it is first opened, by the machine's
// set_init_blocksize policy (package blocksize), and changed by
// [BlockDevice.SetBlocksize] (BLKBSZSET: [File.SetBlocksize]).
//
// A device is opened either for good, as a mounted file system holds it
// ([Machine.Open]: the device the threads' workloads use), or as the block
// device node is: [Machine.AddDisk] makes the device, [BlockDevice.Open]
// returns a [File] — an open file description with its mode, exclusive
// claim, writeback-error cursor and readahead state — and the last
// [File.Close] writes the device back and drops its page cache and block
// size (bdev_release: sync_blockdev, kill_bdev), so that the next open starts
// again from the disk and from set_init_blocksize.
//
// A [Machine] has simulated CPUs. Every operation runs on a [CPU] passed
// explicitly; the CPU counts what the operation did as [Event]s (buffers
// allocated, ring steps, index levels descended, locks, references, bios), so
// one code path gives both clocks of the project: the real Go time that
// `go test -bench` measures, and a deterministic simulated time computed from
// the events by a hardware profile (package bench/timing).
//
// # The operations, and the kernel functions they model
//
//   - [BlockDevice.Getblk] — __getblk_gfp/bdev_getblk → __getblk_slow →
//     grow_buffers → grow_dev_folio: find or create the folio, build its ring
//     (alloc_page_buffers, link_dev_buffers, init_page_buffers).
//   - [BlockDevice.FindGetBlock] — __find_get_block: the per-CPU bh LRU (package
//     lru) in front of [BlockDevice.FindGetBlockSlow], __find_get_block_slow:
//     index lookup, private_lock, ring walk.
//   - [BlockDevice.Bread], [Brelse], [MarkBufferDirty], [SyncDirtyBuffer],
//     [BlockDevice.SyncBlockdev] — the buffer life cycle; I/O goes to a
//     blk.Device as one bio per buffer (submit_bh).
//   - [BlockDevice.TryToFreeBuffers] — try_to_free_buffers: the ring is freed
//     only if no buffer is referenced (a CPU's LRU counts), dirty or locked.
//   - [BlockDevice.SetBlocksize] — set_blocksize: sync, set i_blkbits, kill_bdev
//     (invalidate every CPU's LRU, then truncate the page cache); from v6.15
//     ([blocksize.RulesLarge]) sizes up to 64 KiB, the mapping's minimum folio
//     order set with them, under the invalidate lock.
//   - [BlockDevice.Write] — blkdev_write_iter → generic_perform_write: one page
//     per iteration; pre-fault the user bytes of that page ([IovIter] over a
//     [UserBuf], which really touches its pages and counts them); write_begin
//     (create_empty_buffers, identity get_block, read a partly covered block
//     first); copy; write_end (mark_buffer_dirty per buffer); a simplified
//     balance_dirty_pages ([Config].DirtyLimit).
//   - Writeback ([BlockDevice.SyncBlockdev], the dirty limit, reclaim):
//     writepages over dirty folios in index order inside the CPU's block plug
//     (background writeback: range-cyclic chunks while over the threshold);
//     block_write_full_folio submits one bio per dirty buffer (REQ_SYNC for
//     data integrity); the last end_buffer_async_write of a folio ends its
//     writeback; a write error is recorded as mapping_set_error does: in
//     AS_EIO, reported to the next SyncBlockdev once, and in the mapping's
//     errseq_t, reported to every open File once.
//   - Memory: [Config].PageCacheLimit bounds the page cache; creating a folio
//     beyond it reclaims clean, unused folios oldest first, freeing their
//     buffers through try_to_free_buffers — on the allocating CPU, or on
//     kswapd's with [Config].Kswapd. Folios and buffer heads are recycled
//     through per-CPU free lists (one per folio order).
//   - [BlockDevice.Read] and [File.Pread] — filemap_read with on-demand
//     readahead: v6.18's page_cache_sync_ra / page_cache_async_ra /
//     page_cache_ra_order with a file_ra_state per File, in windows of at
//     most read_ahead_kb (by default twice the device's io_opt, at least
//     128 KiB: two stripes on an md array). With one-page folios its
//     windows for the threads' sequential reads are those of v5.10's
//     ondemand_readahead.
//   - [File] — blkdev_open/bdev_open (O_EXCL claims, set_init_blocksize at the
//     first open), pwrite (blkdev_write_iter: [Config].WriteIter), pread,
//     fsync and fdatasync (blkdev_fsync: file_write_and_wait_range,
//     file_check_and_advance_wb_err, then blkdev_issue_flush's empty
//     REQ_PREFLUSH bio), BLKBSZSET/BLKBSZGET (blkdev_bszset's EBUSY rule),
//     BLKFLSBUF (sync_blockdev + invalidate_bdev), BLKROSET, close
//     (bdev_release). Errors map to errno ([ErrnoOf]).
//   - [BlockDevice.TruncateRange] — truncate_bdev_range before a discard or
//     zeroout: whole folios removed, partial ones zeroed and split
//     (split_folio) down to the mapping's minimum order.
//   - [BlockDevice.FindGetBlockNonatomic], [BlockDevice.FindGetBlockSlowNonatomic]
//     — v6.16's __find_get_block_nonatomic, the lookup that serialises on the
//     folio lock instead of private_lock.
//   - A [Tracer] ([Machine.SetTracer], [BlockDevice.SetTracer]) receives the
//     page cache's tracepoints (folios added, removed and dirtied, buffers
//     dirtied, readahead windows, writeback errors set and reported), from
//     which a runner derives the host runner's counters.
//
// # Kernel variants
//
// What differs between the kernels the LKML threads compare is a field of
// [Config], never a silent choice: the set_init_blocksize policy (the
// set_init_blocksize revert, the set_init_blocksize thread), the alloc_page_buffers variant
// ([AllocLinear], mainline, versus [AllocCircular], Sean Fu's 2017 patch, seed
// 003), the bh LRU ([LRUOn] with 16 or 8 slots versus [LRURemoved], Marcelo
// Tosatti's 2023 patch, plus isolated CPUs from 6.6, the per-CPU bh LRU thread) and the
// page-cache index.
//
// The kernels people run today differ from those in three more fields, each
// zero for the threads' kernels (so their numbers do not move) and set
// together by [Linux618]:
//
//	field          up to                              from
//	Folios         v6.14: FoliosSmall, order 0 only   v6.15: FoliosLarge (min order = get_order(block), max MAX_PAGECACHE_ORDER)
//	SetBlocksize   v6.14: RulesPageSize, ≤ PAGE_SIZE  v6.15: RulesLarge, ≤ 64 KiB (bdev_validate_blocksize)
//	Lookup         v6.15: LookupAtomic                v6.16: LookupNonatomic (getblk under the folio lock)
//
// Older differences change the buffers' bit operations (EvBHBit):
// [Config].BitOps — BitOpsBlind up to v4.17 (the 4.12 presets), where every
// set_buffer_* writes its bit; BitOpsTestSet for v4.18–v5.11 (the 5.x
// presets), where set_buffer_* tests it first; BitOpsTested from v5.12 (the
// 6.4, 6.6 and 6.18 presets, and Linux618), where __block_commit_write's
// clear_buffer_new does too.
//
// Large folios need a kernel built with transparent huge pages:
// without CONFIG_TRANSPARENT_HUGEPAGE (32-bit ARM without LPAE, for one)
// mapping_set_folio_order_range returns before it sets an order, and a 6.18
// block device keeps one-page folios and blocks of at most PAGE_SIZE —
// FoliosSmall with the other 6.18 variants (bench/workload's 6.18-nothp).
//
// With them, and 6.18's write path — iomap with the fixed chunk, which
// asks for a folio of the whole chunk (the WriteIter of
// iomap.Writer(iomap.Linux618); the default generic_perform_write of a
// Config without one takes a page at a time, order 0 whatever the folio
// policy) — a 1 MiB pwrite adds one order-8 folio, 64 KiB pwrites order-4
// folios, and at 16 KiB blocks every folio is at least order 2; writeback
// still submits one bio per dirty buffer whatever the folio's size; a write
// covering a block in part reads the whole block first (at 64 KiB blocks a
// 4 KiB write reads 64 KiB); readahead grows its windows and folios (4, 8,
// 16, 32 pages; orders 0 to 5 for a 4 KiB stream). Every recording of the
// host corpus (testdata/kernel/6.18, 81 scenarios) is reproduced counter for
// counter by this package over package blk's 6.18 queue (bench/workload's
// RunModel and TestRunModelKernel618; see docs/page-cache.md). Opening, closing, errseq writeback errors and the
// fsync flush behave the same in every version.
//
// One example of what the model says: in Tosatti's test, a 1 GiB loop device
// gets 4 KiB blocks from the grow policy, so __find_get_block(bdev, 1, 512)
// never matches an LRU entry (the LRU compares the size, 512 ≠ 4096): each call
// scans all 16 slots, takes the slow path anyway and re-installs the buffer. The
// test measured the LRU's miss cost on top of the slow path, not a hit.
//
// # Concurrency
//
// One goroutine drives one CPU at a time; different goroutines may drive
// different CPUs on the same devices. Page-cache lookups are lock-free (atomic
// pointers in the index, folio_try_get, a re-check); the garbage collector gives
// the RCU guarantee that a folio read without a lock is not reused under the
// reader. private_lock is a spin lock; the folio lock is PG_locked, a bit of
// the folio's flags, as in the kernel (a waiter yields until it can set it);
// buffer state and counts are atomics. A bit operation that would change
// nothing is skipped after a plain atomic load, so the hot paths pay a locked
// instruction only for real changes.
//
// A machine that one goroutine drives alone (every CPU in turn, as
// workload.DD's runs do) says so with Config.OneGoroutine: its locks, flag
// words, reference counts and index stores are then confined (package
// internal/conc) — plain loads and stores doing the same steps, with the same
// results and counted events. On the 512-byte Helios4 dd writes it takes a
// quarter of the Go time off, and a third off the 4 KiB iomap runs.
//
// # Memory
//
// By default folios carry real page data and the device beneath is expected to
// store what is written (blk.MemDisk): reading back after a sync returns exactly
// what was written, which the tests check against a flat byte array. A
// metadata-only device ([DeviceOptions].MetadataOnly) keeps no data, so a
// simulation can reach block 4G and beyond in little memory. Freed buffer heads
// are kept in a per-CPU cache for reuse, as the slab does (a folio's own, its
// frame's spare, by the folio).
//
// What little memory, measured (workload.FootprintOf in bench/workload: Go heap after a collection,
// metadata-only, 16 Ki pages of a 16 TiB device, Go 1.26 on amd64), beside
// what the kernel spends on x86-64 (struct page 64 bytes, struct buffer_head
// 104, an xarray node 576):
//
//	bytes per                          model   kernel
//	buffer head                           64      104   (a 64-byte struct, one cache line)
//	page, consecutive indices             74       73   (a 64-byte Folio; index ~9)
//	page, spread over 2^32 indices      1994     1801   (three index nodes of its own per page)
//
// A folio and the buffer head of its ring's first buffer share one
// 128-byte frame (Folio's spare), carved 512 at a time from page-aligned
// slabs, so that a lookup of a random page misses on one aligned pair of
// cache lines for both (writeback reads both ahead for its batch of
// folios, and BlockDevice.HostPrefetch for a simulator's next records): a
// page without buffers still holds the spare.
//
// Large folios cost less per page: with 64 KiB blocks on a 1 TiB
// metadata-only device, 1 GiB written by 4 KiB pwrites caches order-4 folios
// of one buffer each, 18 bytes per cached page against 138 (page and buffer
// head) with 4 KiB blocks; 1 MiB pwrites at 4 KiB blocks give order-8 folios
// of 256 buffers, 74 bytes per page (TestFootprint64K).
//
// A cached page costs about what it costs the kernel, mostly index nodes
// when pages are scattered, and a buffer head less (the model has no
// b_private, b_assoc_buffers, b_assoc_map or b_uptodate_lock, and b_end_io is
// a byte). A page with data costs PAGE_SIZE more. The 16 Ki blocks
// TestScale16TiB spreads over a 16 TiB device take about 34 MB.
//
// # Bad input
//
// Every entry point that takes a size, a block number, a byte position, a
// length or a page index answers bad values with an error (test with
// errors.Is), leaves the page cache as it was unless the kernel changes it
// too (or the row says otherwise), and never panics; FuzzEntryPoints checks this with values near 0, the
// device's end, 2^32 and 2^64, and TestBadInput row by row (BlkdevWrite and
// FileBufferedWrite are package iomap's):
//
//	bad input                                     entry point            error
//	--------------------------------------------  ---------------------  ------------------------------------
//	negative CPUs, LRU size, dirty or page cache  NewMachine             an error (no sentinel)
//	limit; more than MaxCPUs CPUs or MaxLRUSize
//	LRU slots; unknown alloc variant or LRU
//	mode; flusher CPU out of range
//	PAGE_SIZE not a power of two in [4K, 64K]     NewMachine             blocksize.ErrBadPageSize
//	unknown set_init_blocksize policy             NewMachine             blocksize.ErrUnknownPolicy
//	unknown page-cache index kind                 NewMachine             ErrUnknownIndexKind
//	nil disk, empty disk, disk larger than        Open, AddDisk          ErrBadDevice
//	MAX_LFS_FILESIZE (up to 2^64-1 sectors), a
//	disk the machine already has
//	logical block size not a power of two in      Open                   *blocksize.SizeError
//	[512, PAGE_SIZE]
//	block size not a power of two, < 512,         SetBlocksize           *blocksize.SizeError wrapping
//	> PAGE_SIZE (> 64 KiB with RulesLarge) or                            ErrNotPowerOfTwo, ErrBelowMinimum,
//	< logical block size (0, 1536, 2^31, ...)                            ErrAbovePageSize (ErrAboveMaximum)
//	                                                                     or ErrBelowLogical; nothing changes
//	BLKBSZSET below 0 or above 2^32-1             File.SetBlocksize      ErrInvalid (EINVAL)
//	open flags without read or write              BlockDevice.Open       ErrInvalid (EINVAL)
//	O_EXCL open, or BLKBSZSET through another     BlockDevice.Open,      ErrBusy (EBUSY)
//	descriptor, while one holds O_EXCL            File.SetBlocksize
//	any operation on a closed File; pwrite not    File methods           ErrBadFile (EBADF)
//	open for writing, pread not for reading
//	range empty, past the end or not aligned to   TruncateRange          ErrInvalid (EINVAL)
//	the logical block size
//	the same sizes, block not cached              Getblk, Bread          ErrInvalidBlockSize (EvWarning)
//	the same sizes, block cached                  Getblk, Bread          the cached buffer: the lookup comes
//	                                                                     first and ignores the size, as in
//	                                                                     the kernel
//	valid size other than the block size          Getblk, Bread          ErrSizeMismatch after one round (the
//	                                                                     kernel loops for ever), or a buffer
//	                                                                     of the block size
//	any size, on a page holding a ring of         Getblk, Bread          ErrBuffersBusy, after writing the
//	another size that is referenced (a CPU's bh                          device back once (the kernel loops
//	LRU counts) or locked                                                until the buffers are free)
//	block at or past the device's end             Getblk, Bread          ErrBeyondDevice; the page and its
//	(block 4G of a small device)                                         unmapped buffers stay cached, as in
//	                                                                     the kernel
//	block whose byte offset passes                Getblk, Bread          ErrOutOfRange (EvWarning)
//	MAX_LFS_FILESIZE (2^63 >> blkbits and up,
//	2^64-1)
//	block not cached (2^64-1 included)            FindGetBlock(Slow)     nil
//	page not cached / without buffers / busy      TryToFreeBuffers       ErrNotCached / ErrNoBuffers /
//	                                                                     ErrBuffersBusy
//	write at or past the end (2^64-1 included)    Write, BlkdevWrite     ErrNoSpace
//	write crossing the end, count up to 2^64-1    Write, BlkdevWrite     shortened; the iterator keeps the
//	                                                                     rest
//	empty write (a nil iterator included)         Write, BlkdevWrite     0, nil
//	write to a read-only device                   Write, BlkdevWrite     ErrReadOnly
//	user buffer unreadable where the write        Write, BlkdevWrite     ErrFault / the bytes written before
//	starts / further on
//	read at or past the end / crossing it         Read                   0, nil / shortened
//	iov_iter range outside the user buffer        UserBuf.Iter           an error
//	(off+n wrapping 2^64 included); user buffer
//	page size not a valid PAGE_SIZE (0 included)
//	or buffer passing the top of the address
//	space
//	write_begin range empty or leaving the folio  BlockWriteBegin        ErrBadRange
//	unknown write path, chunk policy or EOF       BlkdevWrite,           iomap.ErrBadOption
//	check; chunk not a power of two of at least   FileBufferedWrite
//	PAGE_SIZE
//	iomap_ops mapping empty, wrapping, not        FileBufferedWrite      iomap.ErrInvalidMapping or
//	covering the write, not identity-mapped or                           iomap.ErrNotModelled; ErrFault for
//	not IOMAP_MAPPED                                                     one ending at the write's start
//	brelse of a free buffer, unlock of an         Brelse, UnlockBuffer,  EvWarning only, as the kernel only
//	unlocked one, mark_buffer_dirty of a buffer   MarkBufferDirty        warns (for a nil buffer, which the
//	not uptodate or nil                                                  kernel does not survive, too)
//
// The block layer and the LRU answer theirs the same way: blk.NewMemDisk,
// blk.NewNullDisk and blk.NewQueue refuse bad sizes and limits
// (blk.ErrInvalidConfig), a bio out of the device or misaligned completes
// with blk.ErrBeyondEnd or blk.ErrMisaligned (FuzzDeviceConfig), a segment
// that would take a bio past 4 GiB − 1 bytes is refused (Bio.AddPage reports
// false, as bio_add_page returns 0; TestBioSizeLimit), and lru.New refuses
// counts below 1 or too large to allocate (lru.ErrCPUs, lru.ErrSize;
// FuzzNew).
//
// A CPU number is the caller's own choice, not input: Machine.CPU and the LRU
// panic on one out of range, as they would on a nil pointer.
//
// # Errors
//
// Bad input returns an error wrapping one of the Err* values (invalid block
// size, block beyond the device, out-of-range index, size mismatch, I/O
// error, busy buffers, bad device) or, for a configuration, a plain error; kernel WARNs are counted as [EvWarning].
// [ErrnoOf] gives the errno a system call would return for any of them
// (EPERM for a write to a read-only device, EIO for a failed writeback at
// fsync, EINVAL for a block size BLKBSZSET refuses, ...). Panics are
// reserved for broken internal invariants; [Config].Check runs the invariant
// checker ([BlockDevice.Check]) after the operations that change the page
// cache's structure or dirty state.
package bufcache
