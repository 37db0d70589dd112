// Package workload holds the experiments of the reproduced threads, run on
// the model the way the threads ran them on the kernel, and the teaching
// views built on them. Each returns what it counted: the events of every
// simulated CPU, md's and every disk's counters, and each resource's demand
// for the timing model (package bench/timing). The kernel presets and the
// runners they use are package bench/engine's.
//
//   - [DD] is dd to or from a block device node on a simulated machine and
//     storage stack: one disk or an md array ([Layout]), a disk model, the
//     page cache's size and dirty limit, the writer on CPU 0 and the flusher
//     on CPU 1. [Helios4DD] and [IMX8BoardDD] are the threads' machines.
//   - [WriteTest] is LTP's writetest as the alloc_page_buffers thread ran it
//     on ext3 with 1 KiB blocks, modelled on the block device's page cache
//     with ext3's indirect blocks.
//   - [LookupModule] is the bh-LRU thread's test module: timed
//     __find_get_block and __find_get_block_slow calls; [HeightSweep] and
//     [CycleSweep] vary the index height and the number of distinct blocks.
//   - [CrashLoss] records what a power cut would lose at each moment of a dd.
//   - [DDGrid] and [SweepDD] run a dd over every combination of a grid of
//     kernels, block sizes, layouts, bs, CPUs and lengths.
//   - [ExplainOps] are single operations explained resource by resource, the
//     way a teacher would put them on a slide.
//   - [FootprintOf] measures the model's memory per cached page and buffer
//     head against the kernel's structure sizes.
//
// Every experiment runs on machines of its own, so running several at once
// ([RunAll], [SweepDD]) never changes a result.
package workload
