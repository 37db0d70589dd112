package timing

import "github.com/bhsim/bhsim/bufcache"

// a9Slowdown is how much longer kernel code takes on the Helios4's Cortex-A9
// at 1.6 GHz than on the x86 server profile's ~3 GHz core: 1.9× the clock
// period times about 2.5× the cycles per instruction of a dual-issue, partly
// out-of-order ARMv7 core with a 32 KiB L1 and a shared 1 MiB L2 against a
// wide out-of-order x86 core. An estimate, not a measurement; the costs it
// scales are the x86 profile's, which cite their own sources.
const a9Slowdown = 4.7

// Helios4 is the profile of the Helios4 NAS of the set_init_blocksize thread: a Marvell Armada 388
// (2 × Cortex-A9 at 1.6 GHz, ARMv7, 4 KiB pages, 2 GiB DDR3-800 on a 32-bit
// bus). Most costs are the x86 server profile's scaled by a9Slowdown; the ones
// where the two architectures differ in kind are set on their own: atomics
// (ldrex/strex with the dmb barriers a value-returning atomic implies), the
// copies (DRAM-bound on a 32-bit DDR3-800 bus), the block layer and md, and the
// RAID6 parity (the kernel's NEON raid6 code). The blocksize thread fits some of them to
// the published table (package threads names which).
func Helios4() *Profile {
	p := X86Server().Scaled("helios4", "Helios4: Marvell Armada 388, 2 × Cortex-A9 at 1.6 GHz, 2 GiB DDR3-800, 4 × WD8003FFBX",
		a9Slowdown, "Cortex-A9 at 1.6 GHz, estimate")
	set := p.Set
	const atomic = "estimate: ldrex/strex loop with the dmb before and after that a value-returning atomic needs on ARMv7 SMP ≈ 50 cycles at 1.6 GHz"
	set(Ev(bufcache.EvFolioGet), 31, atomic+" (folio_try_get)")
	set(Ev(bufcache.EvFolioPut), 31, atomic+" (folio_put_testzero)")
	set(Ev(bufcache.EvBHGet), 20, "estimate: atomic_inc without a barrier ≈ 30 cycles (get_bh)")
	set(Ev(bufcache.EvBHPut), 31, atomic+" (put_bh has smp_mb__before_atomic)")
	set(Ev(bufcache.EvPrivateLock), 40, "estimate: spin_lock (ldrex/strex + dmb) and spin_unlock (dmb + store) ≈ 65 cycles")
	set(Ev(bufcache.EvFolioLock), 62, atomic+", twice (trylock_page, unlock_page)")
	set(Ev(bufcache.EvBHLock), 62, atomic+", twice (lock_buffer, unlock_buffer)")
	set(Ev(bufcache.EvBHBit), 25, "estimate: the mix of b_state's bit operations on ARMv7 SMP — set_bit and clear_bit, an ldrex/strex loop without barriers ≈ 30 cycles, and test_and_set_bit/test_and_clear_bit, with the dmb before and after ≈ 50 cycles — ≈ 40 cycles at 1.6 GHz")
	set(Ev(bufcache.EvCopyByte), 0.8, "estimate: copy_from_user/copy_to_user of page-sized runs at ≈ 1.25 GB/s, bound by the 32-bit DDR3-800 bus (3.2 GB/s peak, read plus write)")
	set(Ev(bufcache.EvBioSubmit), 800, "estimate: bio_alloc from the bio_set mempool, bio_add_page, submit_bio's checks and bio_endio with its end_io ≈ 1300 cycles (blk-mq's part is mq-bios)")
	set(ParamMQBio, 1200, "estimate: blk_mq_submit_bio: blk_attempt_plug_merge's back merge (ll_back_merge_fn, blk_rq_merge_ok) or a request, and blk_account_io ≈ 1900 cycles")
	set(Ev(bufcache.EvBioComplete), 0, "priced with bios: every bio submitted completes once, so the two counts cannot be told apart by a fit")
	set(ParamRequest, 10000, "estimate: blk-mq request allocation, ahci command issue, the completion interrupt and blk_mq_end_request ≈ 16 000 cycles")
	set(ParamMDBio, 1000, "estimate: md_submit_bio (active_io reference, suspend check) and the personality's mapping ≈ 1600 cycles")
	set(ParamMemberBio, 500, "estimate: a member bio's remap (raid0) or bio_clone_fast (raid10's copies), submit_bio_noacct's checks and its endio ≈ 800 cycles (its blk-mq pass is mq-bios)")
	set(ParamMDWriteBio, 3000, "estimate: md_write_start/end, md_bitmap_startwrite/endwrite (bitmap spinlock, counter page), raid10's r10bio mempool allocation and wait_barrier/allow_barrier ≈ 4800 cycles")
	set(ParamStripeAttach, 1000, "estimate: raid5_get_active_stripe's hash lookup and locks, add_stripe_bio's sorted insert ≈ 1600 cycles")
	set(ParamStripe, 8000, "estimate: handle_stripe's analysis, biodrain bookkeeping, ops_run_io and release of one stripe_head ≈ 13 000 cycles")
	set(ParamParityByte, 1.2, "estimate: the kernel's raid6 neonx4 gen_syndrome at ≈ 800 MB/s of data on a Cortex-A9 (boot-time raid6 benchmarks of ARMv7 SoCs report 0.5–1 GB/s), plus the biodrain copy")
	set(ParamDiskRequest, 0, "not used: the WD8003FFBX is timed by its HDD model")
	set(ParamDiskByte, 0, "not used: the WD8003FFBX is timed by its HDD model")
	set(ParamZeroByte, 0.5, "estimate: read_zero's clear_user of dd's 1 MiB buffer, which neither the L1 nor the 1 MiB L2 keeps, at ≈ 2 GB/s of stores on the 32-bit DDR3-800 bus (3.2 GB/s peak)")
	set(ParamSyscall, 500, "estimate: an ARMv7 svc entry and exit with the register save/restore and the Cortex-A9's branch-predictor maintenance ≈ 800 cycles")
	set(ParamMemByte, 0.5, "estimate: the profile's DDR3-800 on a 32-bit bus peaks at 3.2 GB/s; a controller sustains about 60 % of that on the mixed read and write streams of the CPUs and the SATA DMA (bus turnarounds, row misses, refresh) ≈ 2 GB/s")
	set(ParamMemStall, 0.45, "estimate: a 512-byte bio's life touches about 7 cache lines that the data streams have pushed out of the 1 MiB L2 — the buffer_head's two 32-byte lines when the flusher locks and submits it, seconds after dd dirtied it, and the bio's three and the buffer_head's two again at completion, tens of milliseconds and megabytes of copying later — at ≈ 130 ns a miss (DRAM load-to-use latency behind the Armada 388's controller, estimate) ≈ 0.9 µs of the ≈ 2 µs the profile gives a bio's submission and completion; taken to hold for the rest of the kernel work too")
	set(ParamTimer, 0, "not used: no timed calls in the dd scenario")
	return p
}
