// Package lru models the Linux kernel's per-CPU buffer_head LRU (fs/buffer.c:
// bh_lrus, lookup_bh_lru, bh_lru_install, invalidate_bh_lrus) as a generic
// per-CPU LRU, and answers the question of the LKML thread "[PATCH]
// fs/buffer.c: remove per-CPU buffer_head lookup cache" (Marcelo Tosatti, June
// 2023): what is the cache worth, and what does it cost?
//
// # What the cache is for
//
// Filesystems reach their metadata — superblocks, group descriptors, bitmaps,
// inode tables, indirect blocks, journal blocks — through buffer_heads in the
// block device's page cache. __find_get_block(bdev, block, size) returns the
// buffer_head of a block if it is cached. Its slow path,
// __find_get_block_slow, does three things: it turns the block number into a
// page index and looks the page up in the device's page cache (a walk down the
// xarray, one level per six bits of the index); it takes the mapping's
// private_lock, so that the page's buffers cannot be freed under it; and it
// walks the page's ring of buffer_heads until it meets a mapped one with the
// wanted block number.
//
// Metadata blocks are looked up again and again, so the kernel puts a small
// cache in front of all that: each CPU keeps the buffer_heads it found most
// recently, 16 of them since v3.18 (DefaultSize; 8 before, OldSize). Slot 0
// holds the most recent. A slot matches when its buffer_head has the wanted
// device, block number and size. A hit needs no page-cache walk, no
// private_lock and no ring walk; the only "lock" is disabling interrupts on the
// local CPU (bh_lru_lock), a few cycles. The hit moves the buffer_head to slot
// 0, the slots in front of it moving down one: a true move-to-front. A miss
// falls back to the slow path and, if that finds the buffer, installs it.
//
// # The swap cascade
//
// bh_lru_install inserts at the front with a swap cascade: it carries the new
// buffer_head into slot 0, picks up what was there, carries that into slot 1,
// and so on down the array. If it picks up the buffer_head it is installing,
// that one was already cached: it is now in slot 0, the slots before its old
// place have moved down one, and nothing else changed — no reference is taken.
// Otherwise the cascade runs off the end carrying whatever was in the last slot
// (nothing, if the LRU was not full): the new entry gets a reference of its own
// (get_bh), and the carried-out one loses its reference (brelse) once
// interrupts are back on. Empty slots only ever trail, because installs shift
// and invalidation clears every slot.
//
// So an LRU entry always holds one reference per CPU that caches it:
// b_count = (callers holding the buffer) + (CPUs whose LRU holds it). Cache
// keeps that rule through Hooks: Hold is get_bh, Release is brelse.
//
// # Why invalidation needs IPIs
//
// Because every cached entry holds a reference, a buffer_head in any CPU's LRU
// pins its page: try_to_free_buffers refuses a page whose buffers have a
// nonzero count. Whoever must throw a device's pages away has to empty every
// CPU's LRU first: kill_bdev (when set_blocksize changes the block size, and on
// the last close of the device), invalidate_bdev, and the migration of buffer
// pages (which also serves compaction and CMA). CPU hot-unplug drains the dead
// CPU's LRU. An LRU is private to its CPU and touched only with interrupts off,
// so no other CPU can clear it: invalidate_bh_lrus sends a synchronous
// inter-processor interrupt (on_each_cpu_cond) to every CPU whose LRU holds at
// least one buffer_head (has_bh_in_lru), and each one empties its own slots in
// the handler. From 5.13, lru_cache_disable (migration, CMA) also keeps new
// entries out while it runs ("mm: fs: invalidate BH LRU during page
// migration", 8cc621d2f45d), and the per-CPU flush, invalidate_bh_lrus_cpu,
// moved to the lru_add_drain cold path ("mm: fs: invalidate bh_lrus for only
// cold path", Minchan Kim, 243418e3925d).
//
// The interrupt is the price of the cache. Tosatti's motivation was real-time
// guests: in a KVM guest each such IPI costs a VM exit, the interrupt and a VM
// entry, more than 50 µs, which a virtualised RAN with a 1 ms transmission time
// interval cannot afford — and it hits a CPU running a real-time task because
// somebody else changed a block size or migrated a page.
//
// # The 2023 thread
//
// Tosatti measured a loop of 200 000 calls of __find_get_block(bdev, 1, 512)
// on /dev/loop0 at 114 ns per call, against 68 ns per call of
// __find_get_block_slow(bdev, 1), concluded that the cache was slower than the
// path it shortcuts, and proposed to remove it (21 lines added, 234 removed).
// Matthew Wilcox, who also gave a Reviewed-by ("Your test case is the best
// possible one for lookup_bh_lru()"), pointed out that the test "is close to
// being the best-case scenario for page-cache lookup as well as for lru
// lookup" and asked for a rerun with block 4UL * 1024 * 1024 * 1024 instead of
// block 1: the same block every time is a hit in slot 0 for the LRU, and block
// 1 sits in page 0, at the start of the page-cache index, the cheapest place
// for the slow path too. (What block 4G costs on an ordinary loop device is a
// question the model lets one answer.)
// Dave Chinner put the general rule: a lookaside cache pays only when the
// working set fits in it and a hit is much cheaper than a miss, and "Peeking
// at 16 buffers to not find a match is just as expensive as walking 3-4 tree
// levels in an Xarray".
//
// The cache stayed. What went in, for v6.6, was "fs/buffer.c: disable per-CPU
// buffer_head cache for isolated CPUs": bh_lru_install does nothing when
// lru_cache_disabled() or the CPU is isolated (nohz_full, isolcpus), and
// lookup_bh_lru misses at once on an isolated CPU. An isolated CPU therefore
// never holds an entry, has_bh_in_lru is false for it, and it never receives
// the IPI.
//
// # The model
//
// Cache is a set of per-CPU LRUs generic in the key K and the entry E; the
// bufcache package instantiates it with the (device, block, size) key and
// *BufferHead, with get_bh and brelse as Hooks, and puts it in front of the
// page-cache lookup, so that the same code runs Tosatti's loop, Willy's block
// 4G and Dave's miss. Lookup reports how many slots it examined (Size() on a
// miss: the kernel's loop visits every slot) and Install how many slots its
// cascade touched; those counts are what a simulated clock charges for.
//
// Kernel variants are chosen by the caller: the size (OldSize before v3.18,
// DefaultSize since), Disable/Enable (5.13+; do not call them to model an
// older kernel) and SetIsolated (6.6+; isolate no CPU to model an older one).
//
// Each CPU's state sits in its own cache-line-padded struct, with its slots in
// a padded run of one shared array, so CPUs driven from different goroutines do
// not false-share. bh_lru_lock becomes a spin lock per CPU: one
// compare-and-swap to take it when uncontended, which is what lets
// InvalidateAll, InvalidateCPU and SetIsolated come from any goroutine while
// each CPU is driven by its own. Lookup and Install allocate nothing. Check
// verifies the invariants: per CPU, entries and keys unique, empty slots only
// at the end, at most Size() entries, nothing held by an isolated CPU.
package lru
