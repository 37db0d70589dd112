package timing

import "github.com/bhsim/bhsim/bufcache"

// Cycle-count figures below are for a recent Intel or AMD server core at about
// 3 GHz (0.33 ns a cycle). "Agner Fog" is his "Instruction tables" (lists of
// instruction latencies and throughputs per microarchitecture) for Skylake-SP,
// Ice Lake and Zen 3; an L1 hit costs 4–5 cycles on all of them. "Estimate"
// marks a figure built from such counts by reading what the kernel function
// does, not a measurement.
const (
	srcLocked  = "Agner Fog: a LOCK-prefixed read-modify-write (XADD, CMPXCHG) ≈ 18–20 cycles uncontended ≈ 6.5 ns"
	srcL1Step  = "estimate: one dependent L1-hit load (4–5 cycles) plus a compare and branch ≈ 6 cycles"
	srcIrqPair = "estimate: check_irqs_on (PUSHF), CLI, STI and the per-CPU base ≈ 20 cycles (Agner Fog lists PUSHF/CLI/STI as microcoded, several cycles each)"
)

// X86Server is the profile of a 2023 x86-64 server core, the kind of machine
// Marcelo Tosatti measured __find_get_block on (the bh-LRU thread does not name it; his
// work targets KVM real-time guests on recent Xeons). Costs of operations that
// the LRU thread does not exercise (allocation, bios) are provisional estimates
// until the write-path scenarios calibrate them. ParamTimer starts at a
// documented estimate and is the parameter Tosatti's calibration fits.
func X86Server() *Profile {
	p := &Profile{
		Name:        "x86-server",
		Description: "x86-64 server core, ~3 GHz, 4 KiB pages, bare metal",
	}
	set := p.Set

	set(Ev(bufcache.EvIndexLookup), 4, "estimate: filemap_get_entry's fixed part: rcu_read_lock, xas setup, head load, xas_reload re-check ≈ 12 cycles")
	set(Ev(bufcache.EvIndexLevel), 4, "estimate: xas_descend, one node: offset shift/mask, dependent L1 load of the slot, node test ≈ 12 cycles")
	set(Ev(bufcache.EvFolioGet), 6.5, srcLocked+" (folio_try_get: atomic_add_unless)")
	set(Ev(bufcache.EvFolioPut), 6.5, srcLocked+" (folio_put_testzero)")
	set(Ev(bufcache.EvBHGet), 6.5, srcLocked+" (get_bh)")
	set(Ev(bufcache.EvBHPut), 6.5, srcLocked+" (put_bh)")
	set(Ev(bufcache.EvPrivateLock), 7, "spin_lock is one LOCK CMPXCHG (≈20 cycles, Agner Fog), spin_unlock a release store (≈1 cycle)")
	set(Ev(bufcache.EvMarkAccessed), 2, "estimate: folio_mark_accessed on an active, referenced folio tests two flags and returns ≈ 6 cycles")
	set(Ev(bufcache.EvRingWalk), 2, srcL1Step+" (b_this_page, buffer_mapped, b_blocknr)")
	set(Ev(bufcache.EvLRULookup), 6.5, srcIrqPair+" (lookup_bh_lru's fixed part)")
	set(Ev(bufcache.EvLRUSlot), 1, "estimate: one slot: a %gs-relative L1 load and a NULL test, plus field compares when occupied ≈ 3 cycles")
	set(Ev(bufcache.EvLRUHit), 2, "estimate: move-to-front of a hit and the return path ≈ 6 cycles")
	set(Ev(bufcache.EvLRUInstall), 7, srcIrqPair+" plus the lru_cache_disabled() read (bh_lru_install's fixed part)")
	set(Ev(bufcache.EvLRUStep), 1, "estimate: one swap of the install cascade: load, store, compare ≈ 3 cycles")
	set(Ev(bufcache.EvLRUEvict), 0, "priced through bh-puts (the evicted buffer's brelse)")
	set(Ev(bufcache.EvLRUIPI), 1500, "estimate: one synchronous IPI round trip of on_each_cpu_cond on bare metal (x2APIC send, handler entry/exit, completion wait) ≈ 1–2 µs; Tosatti cites > 50 µs in RT KVM guests")
	set(Ev(bufcache.EvBHAlloc), 25, "estimate: kmem_cache_zalloc of a 104-byte buffer_head from the SLUB per-CPU freelist with __GFP_ACCOUNT ≈ 75 cycles")
	set(Ev(bufcache.EvBHFree), 15, "estimate: kmem_cache_free fast path ≈ 45 cycles")
	set(Ev(bufcache.EvRingLink), 2, "estimate: the ~5 stores that set up one buffer_head in alloc_page_buffers' loop, or the closing link")
	set(Ev(bufcache.EvBHInit), 2, "estimate: init_page_buffers' per-buffer stores and tests ≈ 6 cycles")
	set(Ev(bufcache.EvFolioLock), 13, srcLocked+" twice (folio_trylock, folio_unlock)")
	set(Ev(bufcache.EvBHLock), 13, srcLocked+" twice (lock_buffer, unlock_buffer)")
	set(Ev(bufcache.EvFolioAlloc), 100, "provisional estimate: order-0 page from the per-CPU page lists with memcg charge")
	set(Ev(bufcache.EvFolioFree), 80, "provisional estimate: order-0 page back to the per-CPU lists with memcg uncharge")
	set(Ev(bufcache.EvIndexInsert), 150, "provisional estimate: filemap_add_folio: xa_lock, xas_store, LRU add, accounting")
	set(Ev(bufcache.EvIndexDelete), 100, "provisional estimate: filemap_remove_folio: xa_lock, xas_store, accounting")
	set(Ev(bufcache.EvMarkDirty), 15, "estimate: mark_buffer_dirty of a clean buffer: test_set_buffer_dirty and folio_test_set_dirty, two LOCK-prefixed read-modify-writes (Agner Fog, ≈ 20 cycles each), and the tests around them ≈ 45 cycles")
	set(Ev(bufcache.EvFolioDirty), 45, "provisional estimate: __folio_mark_dirty of a clean folio: xa_lock_irqsave, the dirty tag, folio_account_dirtied's per-CPU counters (NR_FILE_DIRTY, NR_DIRTIED, WB_RECLAIMABLE, the task's dirtied pages) and __mark_inode_dirty's early return ≈ 135 cycles")
	set(Ev(bufcache.EvBHBit), 6.5, srcLocked+" (set_bit, clear_bit, test_and_set_bit, test_and_clear_bit on b_state are all LOCK BTS/BTR)")
	set(Ev(bufcache.EvBioSubmit), 150, "estimate: bio_alloc from a bio_set, bio_add_page, submit_bio's checks and the bio's end_io ≈ 450 cycles (blk-mq's part is mq-bios)")
	set(Ev(bufcache.EvBioComplete), 300, "provisional estimate: bio completion and end_io (write-path issue calibrates it)")
	set(Ev(bufcache.EvFaultInPage), 15, "provisional estimate: fault_in_readable touches one byte of a present, mapped user page (a TLB-hit load plus the uaccess setup) ≈ 45 cycles")
	set(Ev(bufcache.EvCopyByte), 0.04, "provisional estimate: copy_from_user streams at ≈ 25 GB/s from L2/L3-resident data")
	set(Ev(bufcache.EvWriteIter), 40, "provisional estimate: one generic_perform_write round's fixed part (write_begin/write_end calls, balance_dirty_pages_ratelimited) ≈ 120 cycles")
	set(Ev(bufcache.EvGetBlock), 3, "estimate: blkdev_get_block sets three fields ≈ 10 cycles")
	set(Ev(bufcache.EvWritepage), 60, "provisional estimate: write_cache_pages' per-folio work around block_write_full_folio (tag lookup, clear_dirty_for_io, start/end writeback) ≈ 180 cycles")
	set(Ev(bufcache.EvReadaheadPage), 50, "provisional estimate: do_mpage_readpage for one folio (get_block, bio_add_page) plus its share of the readahead bookkeeping ≈ 150 cycles")
	set(Ev(bufcache.EvIomapBegin), 30, "provisional estimate: iomap_iter's round around blkdev_iomap_begin: the EOF check and filling struct iomap ≈ 90 cycles")
	set(Ev(bufcache.EvFindSlowFailed), 0, "not priced: a ratelimited printk, off the measured paths")
	set(Ev(bufcache.EvWarning), 0, "not priced: diagnostics")
	set(ParamMQBio, 200, "estimate: blk_mq_submit_bio: the plug merge attempt (bio_attempt_back_merge, ll_back_merge_fn) or a request, and I/O accounting ≈ 600 cycles")
	set(ParamRequest, 2000, "provisional estimate: blk-mq request allocation, AHCI command setup, completion interrupt and blk_mq_end_request ≈ 2 µs")
	set(ParamMDBio, 300, "provisional estimate: md_submit_bio and a personality's mapping of one bio ≈ 900 cycles")
	set(ParamMemberBio, 100, "estimate: a member bio's remap (raid0) or bio_clone_fast (raid10's copies), submit_bio_noacct's checks and its endio ≈ 300 cycles (its blk-mq pass is mq-bios)")
	set(ParamMDWriteBio, 500, "provisional estimate: md_write_start/end, bitmap start/end and raid10's r10bio and barrier for one bio ≈ 1500 cycles")
	set(ParamStripeAttach, 200, "provisional estimate: raid5_get_active_stripe's hash lookup and add_stripe_bio under the stripe lock ≈ 600 cycles")
	set(ParamStripe, 2000, "provisional estimate: one handle_stripe with biodrain and ops_run_io ≈ 6000 cycles")
	set(ParamParityByte, 0.1, "provisional estimate: the raid6 library's AVX2 gen_syndrome at ≈ 10 GB/s")
	set(ParamDiskRequest, 0, "not used: this machine's disks are timed by their own model (or are null)")
	set(ParamDiskByte, 0, "not used: this machine's disks are timed by their own model (or are null)")
	set(ParamZeroByte, 0.033, "estimate: read_zero's clear_user (rep stosb) of a 1 MiB buffer that L2 holds, ≈ 30 GB/s")
	set(ParamSyscall, 100, "estimate: one system call's entry and exit with the usual speculation mitigations ≈ 300 cycles")
	set(ParamMemByte, 0.05, "estimate: two or more channels of DDR4 sustain ≈ 20 GB/s of mixed reads and writes")
	set(ParamFSWritePage, 12700, "estimate: ext3 (the ext4 driver on an indirect-block file system, data=ordered) writing one page of four 1 KiB blocks: a jbd2 handle started and stopped in write_begin/write_end ≈ 2000 cycles, four block allocations through the multi-block allocator (allocation context, group lock, bitmap search, journal write access to and dirtying of the bitmap and the group descriptor) ≈ 8000 cycles each, the indirect block's and the inode's dirtying ≈ 4000 cycles: ≈ 38 000 cycles")
	set(ParamFSReadPage, 2700, "estimate: ext4_mpage_readpages mapping one page of four 1 KiB blocks through ext4_map_blocks and the indirect-block lookup (a buffer lookup of the cached indirect block per block) ≈ 2000 cycles a block ≈ 8000 cycles")
	set(ParamMemStall, 0, "0, the plain bottleneck: two or more DDR4 channels (≈ 20 GB/s) stay far from busy at these workloads' rates, so what the CPUs wait for does not grow with the bus's load")
	set(Ev(bufcache.EvFileOpen), 420, "estimate: open(2) of /dev/loopN: the RCU path walk of two components and do_filp_open's setup ≈ 500 cycles, alloc_empty_file (slab allocation, the files counter, security_file_alloc) ≈ 200, do_dentry_open and blkdev_open's checks ≈ 150, bdev_open (open_mutex, bd_openers, the holder claim of an exclusive open, blkdev_get_whole) ≈ 350, fd_install ≈ 50: ≈ 1250 cycles")
	set(Ev(bufcache.EvRWCall), 120, "estimate: vfs_write's or vfs_read's fixed part on a block device: rw_verify_area with security_file_permission ≈ 100 cycles, the ->write_iter or ->read_iter indirect call ≈ 30, blkdev_write_iter's or blkdev_read_iter's checks and iov_iter setup ≈ 100, fsnotify_modify or fsnotify_access ≈ 100, file_start_write and the f_pos handling ≈ 30: ≈ 360 cycles")
	set(Ev(bufcache.EvFileRelease), 230, "estimate: the last fput: the task_work that runs __fput on the way back to user space ≈ 100 cycles, fsnotify_close and the eventpoll check ≈ 100, blkdev_release → bdev_release (open_mutex, bd_openers, the holder release) ≈ 300, dput, mntput and file_free's RCU callback queued ≈ 200: ≈ 700 cycles")
	set(ParamTracepoint, 150, "estimate: one enabled trace event with a filter: the probe's static call ≈ 20 cycles, trace_event_buffer_reserve into the per-CPU buffered event a filter needs ≈ 80, the event's field stores ≈ 30, filter_match_preds on one predicate ≈ 40, and the copy into the instance's ring buffer with ring_buffer_lock_reserve and unlock_commit ≈ 280: ≈ 450 cycles")
	set(ParamTimer, 25, "estimate before fitting: one ktime_get() with the TSC clocksource (RDTSC ≈ 25 cycles, seqcount, scaling) plus the loop ≈ 25 ns")
	return p
}
