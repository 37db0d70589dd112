// Package host runs a workload scenario on the host's Linux kernel, the
// oracle the bhsim model is checked against, and returns the same
// scenario.Result the model runner returns.
//
// # What a run does
//
// Run needs root, the loop driver (/dev/loop-control) and tracefs, and for
// a device with rbps, wbps, riops or wiops rules cgroup v1's blkio
// controller at /sys/fs/cgroup/blkio with the process in its root group
// (CheckThrottle); without one of them it returns an error naming what is
// missing, before it touches anything. Each run is two passes, each on a
// fresh device: the counting pass, with tracepoints, for the counters, and
// the timing pass, without, for time (time the kernel without tracepoints
// firing, count it with them; Options.NoTiming skips the timing pass). A
// pass
//
//  1. makes a private directory (bhsim-host-PID-RANDOM under the system's
//     temporary directory), mounts a private tmpfs and a private tracefs in
//     it;
//  2. creates a sparse backing file of the scenario's device size on the
//     tmpfs (and a one-page ballast file, so that "backing full" can always
//     shrink the tmpfs to what it uses);
//  3. adds a loop device of its own (LOOP_CTL_ADD with a free index, not
//     LOOP_CTL_GET_FREE, which would hand out loop0–loop7 that other users of
//     the machine may rely on) and binds it with LOOP_CONFIGURE: the
//     scenario's logical sector size as loop_config.block_size, no
//     LO_FLAGS_PARTSCAN, no LO_FLAGS_AUTOCLEAR. AUTOCLEAR would detach the
//     device at the scenario's own last close, so the runner would have to
//     hold a descriptor for the whole run, and then no close of the scenario
//     would be the last: the runner closes its configuring descriptor before
//     the first operation, so the scenario's opens and closes are the
//     device's only ones and first-open (set_init_blocksize) and last-close
//     behaviour are observable;
//  4. applies the device's rules (scenario.Rules) to that device only,
//     each recorded as soon as it is set: rbps, wbps, riops and wiops as
//     blk-throttle rules "MAJ:MIN VALUE" of the blkio root group
//     (blkio.throttle.{read,write}_{bps,iops}_device), which binds the
//     runner's own bios and the writeback of its device; sched as the
//     queue's scheduler, then wbt as its wbt_lat_usec (off as 0, a latency
//     in microseconds); max_bytes, then strict_limit, as the device's bdi
//     files (/sys/class/bdi/MAJ:MIN/). Nothing global is changed;
//  5. in the counting pass, creates a tracing instance
//     instances/bhsim-PID-RANDOM (never the global buffer) with only the
//     block, filemap, readahead and writeback events it counts, each
//     filtered in the kernel to the loop device (dev == major:minor) or the
//     block device inode (i_ino == its dev_t), plus block_plug/unplug
//     filtered to the scenario's thread; the timing pass creates none;
//  6. runs the operations on one locked OS thread (runtime.LockOSThread):
//     the counting pass times each system call's CPU with
//     CLOCK_THREAD_CPUTIME_ID, the timing pass an operation's calls
//     together (see below). After each operation it waits, outside the
//     operation's time, until the device has no request in flight and
//     blk-throttle holds none of its bios (at most a second plus RulesTime;
//     under rules a device still busy then fails the run), so that both
//     passes start each operation from the same state. The counting pass
//     writes "bhsim begin K" and "bhsim end K"
//     to the instance's trace_marker around operation K and reads
//     /sys/block/loopN/stat before and after it;
//  7. in the counting pass, reads the instance's trace, attributes each
//     event to the operation whose begin marker precedes it, and turns
//     events into counters (see the counter list below);
//  8. cleans up: undoes the rules, the last applied first — the queue and
//     bdi files get back the values found (max_bytes, which the kernel
//     keeps as a ratio, through max_ratio_fine), the throttle rules are
//     removed with "MAJ:MIN 0" before the scenario's descriptors are closed
//     (a last close writes the device back) and the device goes, so that
//     no bio stays held —, closes the scenario's descriptors that are still
//     open, detaches the loop device (LOOP_CLR_FD) and removes it
//     (LOOP_CTL_REMOVE), removes the tracing instance, unmounts the tracefs
//     and the tmpfs and removes the private directory.
//
// The result is the counting pass's, with the timing pass's CPU time and
// elapsed times in place of its own. The timing pass times an operation's
// calls together: its Wall is CLOCK_MONOTONIC from its first call's start
// to its last call's end (a buffered pwrite's, not the writeback that
// follows it; a close's, with whatever the kernel does in it, such as the
// last close's writeback), and its CPU the thread's CPU time over the same
// calls, pooled per call (scenario.Measurement.AddPooled). Between two
// calls the kernel goes on with readahead and throttled bios, so that time
// is the operation's, and the runner does next to nothing there (no CPU
// clock reading, a system call). The scenario's Wall is the operations'
// summed, without the runner's waits for an idle device between them. A
// timing pass that ends an operation otherwise than the counting pass did
// (errno, calls, bytes, block size) fails the run.
//
// Cleanup runs on success, on error, on a panic (deferred) and on SIGINT or
// SIGTERM (a handler, installed for the run unless Options.NoSignalHandler,
// cancels the run, waits for its cleanup and exits with 128+signal).
// Afterwards no /sys/block/loop*/loop/backing_file names the private
// directory, no blkio rule names its device and the instances directory
// holds nothing of the run. A process killed with SIGKILL leaves its device
// and its rules behind; CleanStale (bhsim clean) removes what dead runs
// left, the rules on their devices first.
//
// # Bounds
//
// The runner's own bounds hold, tighter than the language's (CheckBounds:
// MaxDeviceSize, 1 GiB, the size of its private tmpfs, and MaxTotalIO,
// 64 MiB of pwrite and pread); each pass has a timeout
// (Options.Timeout, 2 minutes by default plus what the throttle rules can
// add, RulesTime) checked between system calls; the
// trace buffer is sized from the scenario's I/O (TraceBufferFor, unless
// Options.TraceBufferKB sets it) and bounded, and a run whose trace lost
// events fails rather than report wrong counts, naming a size that would
// have held them.
//
// # Operations on the host
//
// open is open(2) of /dev/loopN with O_RDONLY, O_WRONLY or O_RDWR (and
// O_EXCL), followed by BLKBSZGET for the block size; blkbszset is BLKBSZSET
// (then BLKBSZGET when it succeeded); dropcaches is BLKFLSBUF on the
// descriptor (device-local, never /proc/sys/vm/drop_caches); readonly is
// BLKROSET; "backing full" remounts the private tmpfs with size= the bytes
// it uses, so the backing file can no longer grow.
//
// # Counters
//
// Each event counts through the counter vocabulary the model's counting
// uses (scenario.CounterFamilies and the workload.Count* functions), one
// function per tracepoint group: bio.* from block_bio_queue and
// block_split, merge.* from the merges, rq.* and sectors.* from the
// request events, rmw.read.* from read bios inside a pwrite, plug.* from
// the scenario's thread's block_plug and block_unplug, buffer.dirty,
// pagecache.* from the block device inode's folios, readahead.* and
// wberr.*; stat.* are /sys/block/loopN/stat deltas of completed I/O. The
// families, their units and tracepoints are listed in
// docs/scenario-language.md ("Counters"). A counter with no event is absent
// (it counts 0).
//
// # Calibration
//
// Measure (bhsim calibrate --host) times CalibrationScenarios on the
// kernel and returns a CalibrationRecord, which CalibrationRecord.Fit (also
// bhsim calibrate --recorded FILE, anywhere, without root) fits a profile
// to, by the time per call. On ClockWall, the default, that is the timing
// pass's elapsed time, no tracepoints firing, the time validate compares;
// the fsyncs, whose elapsed time is the loop disk's, are left out. On
// ClockCPU it is the counting pass's thread CPU time with the tracepoints
// firing (it runs with NoTiming), and the tracepoints the runner enables
// are counted where they fire in the calling thread (threadFirings,
// checked against the kernel by TestThreadFiringsLive). What the runner's
// own timing adds is measured, not fitted (MeasureHarness: an empty timed
// interval and a null system call); a loop device's completions, which
// its worker runs, are left out. HostFit names the costs and the cells
// fitted; the other cells are held out and predicted.
package host
