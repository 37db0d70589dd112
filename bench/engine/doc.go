// Package engine builds the simulated machine a workload runs on and runs
// it: the kernel presets ([Kernel]), the machine builder ([Build]), the
// disks ([Disk]), the scenario runner ([RunModel]) and the runner of
// traces, generators and scenarios ([Run]).
//
// # Machines
//
// Every experiment of the model — a dd, writetest, the lookup module, a
// sweep's cell, the footprint, a scenario, a trace — builds its machine
// through [Build] from a [MachineSpec]: a kernel preset whose variants it
// runs, the machine's CPUs and kernel threads (the flusher's, kswapd's),
// its page-cache and dirty limits, and the disk it is built around. Two
// machines differ only by what their specs say.
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
// # Running
//
//   - [RunModel] runs a scenario (package bench/scenario) on one simulated
//     CPU and returns the same result the host kernel runner returns, so the
//     two can be compared counter by counter.
//   - [Run] runs a user's [Workload] — a trace ([TraceWorkload]), a seeded
//     generator ([GenWorkload]) or a scenario ([ScenarioWorkload]), all
//     streams of records from package bench/source — on N simulated CPUs
//     interleaved by simulated time, and returns a [RunResult]: latency
//     distributions per kind of operation, throughput over simulated time,
//     each resource's busy time and the bottleneck bound, the bh LRU's hit
//     ratio and miss-ratio curve; [StepOptions] print it operation by
//     operation for teaching (docs/traces.md).
//
// # Time
//
// Both runners keep one discrete-event clock (clock.go): each call's CPU
// work priced from its events, its bios through the device's blk-throttle
// rules, its requests on a disk that serves them in order, and the calls
// that wait for their I/O completing with it. On it run the kernel's own
// timing mechanisms: blk-throttle (bufcache/blk.Throttle), and the flusher
// thread with the writers' balance_dirty_pages (writeback.go: 6.18's
// control law, bufcache.DirtyThrottle), which a workload always has and a
// scenario has when its device sets bdi dirty limits; and the memory bus
// (bus.go), whose load — the CPUs' copies and the requests' DMA —
// stretches a CPU's work under a profile with a memory-stall share, as
// bench/timing's Contended does for a run's loads. The device may be an
// md array ([Array]): each member a disk of its own on the clock, md's
// per-bio work on the submitting CPU, a RAID6 write's stripes on raid5d.
// Run as a dd runs (RunOptions.FromZero, ToNull, LastClose, Limits;
// bench/workload's DD.OnClock) it gives the threads' dd runs the MB/s of
// their phases within a few per cent; the threads' tables still price a
// dd's phases by their busiest resource (bench/workload;
// docs/known-differences.md).
//
// The experiments of the threads (dd, writetest, the lookup module, sweeps)
// live above it, in package bench/workload.
package engine
