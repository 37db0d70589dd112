// Package workload drives the bhsim model the way the threads' experiments
// drove the kernel, and returns what it counted: the events of every
// simulated CPU, md's and every disk's counters, and each resource's demand
// for the timing model (package timing).
//
// # Kernels
//
// A [Kernel] bundles every variant of the model that differs between the
// kernels the threads compare — the set_init_blocksize policy, the write(2)
// path of a block device and iomap's chunk, the bh LRU, the
// alloc_page_buffers variant — under the name a thread's table gives it
// ([Kernels], [KernelByName]): "9011495c9466", "5ff9f19231a0", "5.10.10"
// and "5.10.10+revert" of the Helios4 table, "6.6", "6.6-revert" and
// "6.6-fix" of Xu Yang's, "6.4" and "6.4-nolru" of Tosatti's, "4.12" and
// "4.12-circular" of Sean Fu's, and "6.18" and "6.18-nothp", the kernel
// people run today (the default of run and validate).
//
// # Workloads
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
//   - [Run] runs a user's [Workload] — a trace ([TraceWorkload]: blkparse,
//     fio iolog, CSV, scenario), a seeded [Generator] ([GenWorkload]) or a
//     scenario ([ScenarioWorkload]) — on N simulated CPUs interleaved by
//     simulated time, and returns a [RunResult]: latency distributions per
//     kind of operation, throughput over simulated time, each resource's
//     busy time and the bottleneck bound, the bh LRU's hit ratio and
//     miss-ratio curve; [StepOptions] print it operation by operation for
//     teaching (docs/traces.md).
//
// Every workload runs on machines of its own, so running several at once
// ([RunAll], [SweepDD]) never changes a result.
package workload
