// Package bench turns the model's events into simulated time and reproduces
// the LKML threads bhsim is about, beside Go benchmarks of the same code.
//
// # Two clocks
//
// Every bufcache operation does its real work in Go — walking rings, scanning
// LRU slots, descending the index — so `go test -bench` measures relative CPU
// costs on whatever machine runs it. The same operation also counts events on
// its simulated CPU. A [Profile] prices each event in nanoseconds for a given
// machine, with the source of each figure, and [Profile.SimNS] turns counts into
// simulated nanoseconds that are the same on every machine and every run. The
// benchmarks report both: ns/op from Go, sim-ns/op and events per op
// (lru-compares/op, index-levels/op, …) from the model.
//
// # Calibration
//
// [Calibrate] fits named costs of a profile to named published cells by least
// squares and reports every cell, fitted or predicted, with its error; it
// refuses as many parameters as cells. For the bh-LRU thread (seed 004) one
// parameter is fitted, the harness cost of a timed call (ParamTimer: Tosatti's
// ktime_get), to the 68 ns of __find_get_block_slow; the 114 ns of
// __find_get_block is then a prediction from the documented costs.
//
// # The bh-LRU thread
//
// Marcelo Tosatti measured 114 ns per __find_get_block(bdev, 1, 512) and 68 ns
// per __find_get_block_slow(bdev, 1) on /dev/loop0 and proposed removing the
// per-CPU LRU. The model, run on his module as written ([TosattiSeed],
// [ReproduceLRU]), shows why the LRU lost: a loop device of an ordinary size
// (1 GiB) gets 4 KiB blocks from set_init_blocksize's grow policy, and the LRU
// compares the size argument, so (bdev, 1, 512) never matches the 4096-byte
// buffer it holds. Every __find_get_block call scans all 16 slots, takes the
// slow path anyway, and re-installs the buffer. The test timed the LRU's miss
// cost on top of the slow path, not a hit. Willy asked for a rerun at block
// 4UL<<30: on the same 1 GiB device that block does not exist (both calls return
// NULL at once); on a device large enough the slow path pays six xarray levels
// while an LRU hit would pay none ([HeightSweep]). Cycling more distinct blocks
// than the LRU has slots turns every call into a miss ([CycleSweep]): Dave
// Chinner's point that a lookaside cache only pays when the working set fits.
//
// # The timing model of streaming runs
//
// A streaming workload such as dd keeps every part of the machine busy at
// once: the writer's CPU copies into the page cache while the flusher's CPU
// writes back, md's threads handle stripes, interrupts complete bios and each
// disk serves its requests. The timing model of bhsim is the textbook one for
// such a pipeline, the operational (bottleneck) analysis of queueing networks:
//
//  1. Each resource r — a CPU, an md thread, a disk — has a service demand
//     D_r: the time it is busy for the whole run. For a CPU it is the dot
//     product of the events it counted with the profile's costs; for a disk,
//     the sum of its requests' service times.
//  2. The throughput X of a run that moves B bytes cannot exceed B / D_r for
//     any r (the utilisation law: a resource is busy X·D_r/B of the time, at
//     most 100 %). A station of m identical servers can reach m, so work that
//     can run on any of the machine's CPUs — all CPU demand together — gives
//     a bound of m·B / ΣD.
//  3. The model's run time is the largest of these demands, T = max_r D_r / m_r,
//     and X = B / T: the busiest resource sets the pace.
//
// The bound is exact when the stages overlap perfectly, as they do in a long
// sequential stream with enough buffering between them (the dirty page limit,
// the plug, the disk's queue): each stage then works at the bottleneck's pace
// and waits for nothing else. It is optimistic when a stage must wait for
// another (a synchronous read, a small queue depth, lock contention), and when
// two resources take turns on one physical CPU beyond what the all-CPU bound
// counts. The model reports each resource's demand so a reader can see how
// close to the bound the others run (Bottleneck, Loads).
//
// # The set_init_blocksize thread
//
// Maxim Mikityanskiy bisected a write regression on a Helios4 NAS (two
// 1.6 GHz Cortex-A9 cores, four WD8003FFBX disks) to "block: simplify
// set_init_blocksize" (v5.9), which left a block device at its logical block
// size, 512 bytes, instead of growing it to 4096; the revert restored writes
// 1.5–3.5× faster, reads unchanged (seed 000). [ReproduceBlocksize] runs his dd
// (bs=1M count=2000) on the model for both policies on every column ([DD],
// [Helios4DD]): one disk, raid0, raid10 far-2 and near-2, raid6 over four
// disks. With 512-byte buffers writeback submits eight bios per page instead of
// one; the member disks merge them back into requests, so the disks see much
// the same I/O, but every bio costs the block layer — and on md every bio also
// passes md_submit_bio, the personality and, for the redundant levels, the
// write bookkeeping, once per 512 bytes. The flusher's CPU becomes the
// bottleneck ([DDResult.Loads] shows every resource per page). Reads go
// through readahead in multi-page bios without buffer heads, so the block size
// does not touch them.
//
// The [Helios4] profile estimates each cost from the x86 profile and the
// Cortex-A9's clock and pipeline; [DefaultBlocksizeFit] fits the seven costs the
// estimates are weakest on to the 5.10.10 write cells and one read, and the
// rest of the table is predicted. The fit's verdict is itself a finding: a bio
// costs about 1.9 µs on the Helios4, redundant md levels add about 3.8 µs of
// write bookkeeping per bio, and the per-page work of writeback outside the
// bios (about 14 µs, the flusher's fixed cost per page in this model: page
// locking, tagging, writeback accounting, the completion of the page) is what
// keeps the reverted kernel's RAID0 and RAID10 at 220–274 MB/s rather than at
// the disks' speed. What else differs between the table's kernels (block-layer
// and md changes that Maxim credits for 5.10.10's better RAID reads) is not
// modelled: rows with the same policy simulate alike.
//
// # The iomap thread
//
// From v6.6 a buffered write to a block device goes through iomap
// (487c607df790) instead of generic_perform_write. Xu Yang (NXP) found dd's
// write speed falling as its bs grew, 334 MB/s at bs=400K to 139 MB/s at
// 4500K, flat at ~333 with the change reverted (seed 002). [ReproduceIomap]
// runs his dd for the three kernels ([WritePresets]: 6.6, 6.6-revert, 6.6-fix)
// and six block sizes on the [XuYangBoard] profile (an assumed i.MX 8M Plus
// class SoC; the thread names neither SoC nor disk) over [XuYangSSD]. The root
// cause, as the model counts it: iomap_write_iter takes chunks of PAGE_SIZE <<
// MAX_PAGECACHE_ORDER (2 MiB) and pre-faults the whole of
// min(chunk − offset, bytes left of the write) of the user buffer before each
// iteration, but the block device's mapping has no large folios, so
// write_begin clamps the iteration to one 4 KiB page. Every page written thus
// touches up to 512 user pages: 47 per page at bs=400K, 218 at 4500K (the
// writes are longer, so more of the chunk is left each time). The fit prices a
// touched page at about 110 ns; at bs=400K the pre-fault still fits under the
// SSD's speed, from 800K on it is the writer's CPU that sets the pace. The fix
// (4e527d5841e2) makes the chunk mapping_max_folio_size, one page here: one
// touch per page, flat at the SSD's speed like the buffer-head path.
//
// # The alloc_page_buffers thread
//
// Sean Fu (2017) proposed building a page's b_this_page list circular in
// alloc_page_buffers, sparing its callers the walk to the tail that closes the
// ring, and reported ext3 (1 KiB blocks) writing 800 MB 16 % faster and reading
// it 11 % faster in system time; Al Viro asked whether the change could be
// observable at all. [ReproduceAlloc] runs his writetest ([WriteTest]) on the
// model with both variants on the [X86Desktop2017] profile: the patch saves
// four ring steps per page written (about 7 ns of some 21.7 µs) and almost
// nothing on a cold read, so the model's answer to Al Viro is no — the claimed
// gains are about 500 times what the saved steps can cost.
package bench
