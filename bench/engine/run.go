package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// Workload is a user's workload for Run: a stream of I/O records — a trace,
// a seeded generator, a scenario — and the device it addresses. Build one
// with TraceWorkload, GenWorkload or ScenarioWorkload, or fill it in for a
// reader of one's own.
type Workload struct {
	// Name names the workload in output headers: the trace's path, the
	// generator's spec, the scenario's name.
	Name string
	// Kind is where the records come from: "trace (FORMAT)", "gen" or
	// "scenario".
	Kind string
	// DeviceSize is the device's size in bytes (a positive multiple of
	// LogicalBlockSize); a record past its end is an error naming the
	// record's line.
	DeviceSize uint64
	// LogicalBlockSize is the device's logical block size (0: 512).
	LogicalBlockSize uint32
	// CPUs and QueueDepth are the defaults of RunOptions' (0: 1).
	CPUs, QueueDepth int
	// Seed is the generator's seed, printed in every header when Seeded.
	Seed   uint64
	Seeded bool
	// Records is the number of records Open's reader gives, 0 when unknown
	// (the progress callback's total).
	Records uint64
	// Open returns a fresh reader of the records from the first; Run calls
	// it once per run (the miss-ratio curve runs the workload again per LRU
	// size) and closes the reader if it is an io.Closer.
	Open func() (source.IOReader, error)
	// Streamed says the records are read in one pass: they come from a
	// stream read in one pass (standard input, a pipe, a FIFO), or from a
	// file read as one (TraceDevice.OnePass), whose CPUs and records are
	// not known before its end. Run then refuses a
	// miss-ratio curve (it reruns the workload), and, unless RunOptions.CPUs
	// says how many CPUs to run on, runs on one and refuses a record of
	// another CPU.
	Streamed bool
	// Setup are scenario operations Run makes on CPU 0, as RunModel makes
	// them, before the CPUs open the device and the records start: a
	// scenario's lines before its first I/O (open, blkbszset, …), so that
	// the records run at the block size it sets. A failing call fails as
	// in the scenario (BLKBSZSET of a refused size leaves the size).
	Setup []scenario.Op
	// Rules are the device's rules (a scenario's device line): its
	// blk-throttle limits on the clock, its scheduler and wbt, and its
	// bdi's dirty limits in balance_dirty_pages.
	Rules scenario.Rules
}

// Access says how records reach the page cache.
type Access uint8

// The access paths.
const (
	// AccessAuto sends records a block trace flags REQ_META (blkparse's M:
	// a filesystem's metadata, which it reads and writes through buffer
	// heads) through AccessBuffers and the others through AccessPageCache.
	AccessAuto Access = iota
	// AccessPageCache makes every record pread(2), pwrite(2), fsync(2) or
	// fdatasync(2) of the block device node, as a database or fio with
	// ioengine=psync does: the page cache's folios, iomap or
	// generic_perform_write, readahead.
	AccessPageCache
	// AccessBuffers sends every block of a read or write through the
	// buffer cache as a filesystem's metadata does: __bread (a read, and a
	// partial write first), __getblk for a whole-block write, then
	// mark_buffer_dirty and brelse; each lookup goes through the CPU's bh
	// LRU (__find_get_block), which is what the LRU statistics count.
	AccessBuffers
)

var accessNames = [...]string{"auto", "pagecache", "buffers"}

// String is the access path's name: "auto", "pagecache" or "buffers".
func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return fmt.Sprintf("access(%d)", a)
}

// ParseAccess returns the access path called s.
func ParseAccess(s string) (Access, error) {
	for i, n := range accessNames {
		if n == s {
			return Access(i), nil
		}
	}
	return 0, fmt.Errorf("engine: unknown access %q (want auto, pagecache or buffers)", s)
}

// Disk is a named disk model for Run: the service time of each read,
// write and flush request (blk.Model), and the disk's discard support and
// price (the zero Discard: a disk without discard).
type Disk struct {
	Name    string
	Model   blk.Model
	Discard DiscardModel
}

// Disks returns the built-in disk models: "ssd" (the default: the SSD the
// timing.IMX8Board profile assumes for Xu Yang's board, its disk-requests
// and disk-bytes costs — 20 µs a command, 400 MB/s — with a SATA SSD's
// discard limits and SSDDiscardPrior), "hdd" (blk.WD8003FFBX: 7200 rpm,
// its datasheet's 235 MB/s; a disk without discard, as a CMR drive is)
// and "null" (no time: CPU costs alone; brd's discard limits, at no
// cost).
func Disks() []Disk {
	return []Disk{{"ssd", assumedSSD(), SSDDiscardPrior()}, {"hdd", blk.WD8003FFBX(), DiscardModel{}},
		{"null", blk.Null{}, DiscardModel{MaxSectors: 1<<23 - 1, Granularity: 4096}}}
}

// assumedSSD is the SSD of timing.IMX8Board's assumptions, as a disk model
// of its own: one source for the assumption.
func assumedSSD() blk.SSD {
	p := timing.IMX8Board()
	return blk.SSD{MBps: 1e3 / p.NS[timing.ParamDiskByte], LatencyNS: p.NS[timing.ParamDiskRequest]}
}

// DiskByName returns the built-in disk called name.
func DiskByName(name string) (Disk, error) {
	for _, d := range Disks() {
		if d.Name == name {
			return d, nil
		}
	}
	return Disk{}, fmt.Errorf("engine: unknown disk %q (want ssd, hdd or null)", name)
}

// RunOptions say how Run simulates a workload. The zero value is the 6.18
// kernel on the x86-server profile's CPU costs, with the workload's CPUs
// and queue depth, over the "ssd" disk, a 2 GiB machine, page data not
// kept.
type RunOptions struct {
	// Kernel is the kernel (the zero Kernel: the "6.18" preset; a Kernel
	// with nothing but a Name: the preset of that name, KernelByName; any
	// other needs a Name, which labels the results).
	Kernel Kernel
	// Profile prices the CPUs' events (nil: timing.X86Server);
	// ProfileCosts says where its costs come from, for the header
	// ("built-in", "fitted", "from FILE"; "" means "built-in").
	Profile      *timing.Profile
	ProfileCosts string
	// Disk is the disk model; without a Model, the built-in disk of its
	// Name (DiskByName; no Name: "ssd").
	Disk Disk
	// CPUs is the number of simulated CPUs the records run on (0: the
	// workload's); record r runs on CPU r.CPU mod CPUs. One more CPU is the
	// flusher's, where background writeback runs.
	CPUs int
	// QueueDepth is how many operations each CPU keeps in flight (0: the
	// workload's; 1 means each waits for the last).
	QueueDepth int
	// Access is how records reach the page cache.
	Access Access
	// MemoryBytes is the machine's memory (0: 2 GiB): the page cache may
	// hold 3/4 of it, which is also the dirtyable memory, so background
	// writeback starts when a tenth of the page cache's capacity is dirty
	// (dirty_background_ratio's default) and writers are paused at a
	// fifth (dirty_ratio's).
	MemoryBytes uint64
	// Data keeps page data (the device and the page cache hold real
	// bytes); by default the device is metadata-only, so that memory does
	// not depend on the data written.
	Data bool
	// MRCSizes are bh LRU sizes (slots per CPU, 1 to bufcache.MaxLRUSize)
	// for the miss-ratio curve: the workload runs once more per size, with
	// Kernel.LRUSize set to it, in parallel, each run deterministic. The
	// kernel's own size is always in the curve.
	MRCSizes []int
	// Progress, if set, is called from Run's goroutine every 65536 records,
	// at least every quarter second of wall time (looking every 64
	// records), and at the end, with the records done and the total: the
	// workload's Records, an estimate from the file read for a trace read
	// in one pass (source.Trace.Consumed), 0 when not known (a stream);
	// at the end, the records done.
	Progress func(done, total uint64)
	// Step, if set, receives step mode's block after every operation (see
	// StepOptions).
	Step *StepOptions
	// Check runs the machine's invariant checks at every operation.
	Check bool
	// ReplayNoStall issues every record as soon as its CPU can take it,
	// ignoring its time stamp (fio's replay_no_stall): the trace's order
	// at the model's pace.
	ReplayNoStall bool
	// ReplayTimeScale multiplies the time from the trace's first record to
	// each record's (0: 1, the trace's own timing): 2 replays it at half its
	// rate, 0.5 at twice its rate — fio's replay_time_scale=200, which is a
	// percentage of the rate.
	ReplayTimeScale float64
	// FromZero makes every write read its data from /dev/zero first, as
	// `dd if=/dev/zero of=DEV` does a block: a read(2) of the write's
	// length into the writer's buffer before its write(2), which costs a
	// system call and read_zero's clear_user of each byte
	// (timing.ParamSyscall, ParamZeroByte) on the writer's CPU, the clear a
	// store of each byte on the memory bus. A write's latency includes
	// the read's. Without it a write's data is in its buffer already, as a
	// traced application's is.
	FromZero bool
	// ToNull makes every read write its data to /dev/null after, as `dd
	// if=DEV of=/dev/null` does a block: a write(2) that write_null
	// answers at once, a system call (timing.ParamSyscall) on the reader's
	// CPU, in the read's latency.
	ToNull bool
	// LastClose ends the run with dd's close of the device: each stream
	// CPU closes its file once its operations are done, and the close that
	// drops the device's last open writes it back and drops its page cache
	// (bufcache.File.Close: blkdev_put's sync_blockdev and kill_bdev), a
	// call on the clock that waits for its writes. The run's time then
	// includes writing back everything its writes left dirty, as coreutils
	// dd's rate does. Without it the run ends when its last record and the
	// background writeback under way end, and what is still dirty below the
	// background threshold stays so.
	LastClose bool
	// Array, if its Members is not 0, makes the device an md array of
	// that many disks of the disk model (Array): each member a queue and a
	// disk of its own on the clock, md's work on the CPUs and on raid5d.
	// The device's rules (Workload.Rules: blk-throttle, the scheduler,
	// wbt, the bdi's dirty limits) and a scenario's backing store are
	// modelled for a single disk only and are refused with an array.
	Array Array
	// Limits, if not nil, are the disk's queue limits (each member's, on
	// an array) in place of the loop-like queue's (blk.LoopLimits of the
	// workload's logical block size): a SATA disk behind AHCI
	// (blk.AHCIMaxSegments), as a dd of the threads' machines has. Their
	// logical block size must be the workload's; the kernel's block-layer
	// version replaces theirs.
	Limits *blk.Limits
	// SetBlocksize, if not 0, is the block size set on the device once the
	// CPUs have opened it and before the first record (set_blocksize, as a
	// BLKBSZSET or a filesystem's sb_set_blocksize sets it): the way to
	// blocks above a page, 8 KiB to 64 KiB, which only a kernel with
	// blocksize.RulesLarge accepts. Its work is not the run's. Errors: the
	// kernel's refusal (bufcache.BlockDevice.SetBlocksize), wrapping
	// ErrRunOptions.
	SetBlocksize uint32

	// cpusFixed says CPUs was defaulted for a streamed workload: a record
	// of another CPU is an error (normalize sets it).
	cpusFixed bool
}

// ErrRunOptions is wrapped by Run's errors about its options.
var ErrRunOptions = errors.New("engine: invalid run options")

// Run simulates workload w on a machine of opts.Kernel: w's records on
// opts.CPUs simulated CPUs, each CPU's records in order, the CPUs
// interleaved by simulated time (the CPU that can start an operation
// earliest goes first, ties to the lower CPU), the model doing each
// operation on its CPU, the profile pricing its events and the disk model
// its requests. The result is deterministic: the same workload and options
// give the same Result on every machine, whatever the goroutine
// scheduling. See docs/traces.md for the timing model: one clock (the
// one RunModel keeps), with CPU time from events, the device's
// blk-throttle rules, a disk serving requests in order, background
// writeback by the flusher on its CPU and the writers paced by
// balance_dirty_pages (bufcache.DirtyThrottle), reclaim in kswapd, each
// CPU keeping up to QueueDepth operations in flight.
//
// Errors: invalid options (ErrRunOptions), a reader's error (a
// *TraceError naming the record's line), a record that IO.Valid refuses
// (a reader of one's own can give one) or past the device's end (a
// *TraceError naming its line), an empty workload (no record at all),
// ctx done (checked every 1024 records), a broken machine invariant with
// Check. Cost: linear in the records and their bytes; memory bounded by
// the device and the look-ahead of 4096 records, not by the workload's
// length. The reader is read 16 records at a time (batchReader: the
// host's caches are warmed for their pages), so a run on a slow stream
// starts when its first 16 records, or its end, have come.
func Run(ctx context.Context, w Workload, opts RunOptions) (*RunResult, error) {
	o, err := opts.normalize(w)
	if err != nil {
		return nil, err
	}
	res, err := runOnce(ctx, w, o, o.Kernel, true)
	if err != nil {
		return nil, err
	}
	sizes := o.mrcSizes(res.LRU.Size)
	curve := make([]MRCPoint, len(sizes))
	errs := make([]error, len(sizes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, size := range sizes {
		if size == res.LRU.Size {
			curve[i] = res.LRU.point()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			k := o.Kernel
			k.LRUSize = size
			q := o
			q.Progress, q.Step = nil, nil
			r, err := runOnce(ctx, w, q, k, false)
			if err != nil {
				errs[i] = err
				return
			}
			curve[i] = r.LRU.point()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res.MRC = curve
	return res, nil
}

// runOnce runs w once with kernel k; full builds the whole result, else
// only the LRU counts.
func runOnce(ctx context.Context, w Workload, o RunOptions, k Kernel, full bool) (*RunResult, error) {
	rd, err := w.Open()
	if err != nil {
		return nil, err
	}
	if c, ok := rd.(io.Closer); ok {
		defer c.Close()
	}
	e, err := newEngine(w, o, k)
	if err != nil {
		return nil, err
	}
	if err := e.run(ctx, rd); err != nil {
		return nil, err
	}
	return e.result(full), nil
}

// normalize fills in the defaults and checks the options.
func (o RunOptions) normalize(w Workload) (RunOptions, error) {
	bad := func(format string, args ...any) (RunOptions, error) {
		return o, fmt.Errorf("%w: %s", ErrRunOptions, fmt.Sprintf(format, args...))
	}
	if w.Open == nil || w.DeviceSize == 0 {
		return bad("the workload has no reader or no device size")
	}
	switch {
	case o.Kernel == Kernel{}:
		o.Kernel = linux618()
	case o.Kernel.Name == "":
		return bad("a kernel without a Name (the Name labels the results; KernelByName gives a preset)")
	}
	k, err := o.Kernel.Resolved()
	if err != nil {
		return bad("%v", err)
	}
	o.Kernel = k
	if o.Profile == nil {
		o.Profile = timing.X86Server()
	}
	if o.ProfileCosts == "" {
		o.ProfileCosts = "built-in"
	}
	if o.Disk.Model == nil {
		name := o.Disk.Name
		if name == "" {
			name = Disks()[0].Name
		}
		d, err := DiskByName(name)
		if err != nil {
			return bad("%v", err)
		}
		o.Disk = d
	}
	if o.CPUs == 0 {
		o.CPUs = max(w.CPUs, 1)
		o.cpusFixed = w.Streamed && w.CPUs == 0
	}
	if o.QueueDepth == 0 {
		o.QueueDepth = max(w.QueueDepth, 1)
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = 2 << 30
	}
	switch {
	case o.CPUs < 1 || o.CPUs > source.MaxGenCPUs:
		return bad("%d CPUs (want 1 to %d)", o.CPUs, source.MaxGenCPUs)
	case o.QueueDepth < 1 || o.QueueDepth > source.MaxGenQueueDepth:
		return bad("queue depth %d (want 1 to %d)", o.QueueDepth, source.MaxGenQueueDepth)
	case o.Access > AccessBuffers:
		return bad("access %d", o.Access)
	case o.MemoryBytes < 1<<20:
		return bad("memory of %d bytes (want at least 1 MiB)", o.MemoryBytes)
	case o.Array.Members != 0 && w.Rules.Any():
		return bad("the device's rules (%s) are not modelled on an md array: the model gives them to a single disk", strings.TrimSpace(w.Rules.String()))
	case o.Array.Members < 0 || o.Array.Members > MaxArrayMembers:
		return bad("an array of %d members (want 1 to %d)", o.Array.Members, MaxArrayMembers)
	case o.Array.Members != 0 && slices.ContainsFunc(w.Setup, func(op scenario.Op) bool { _, ok := op.(scenario.BackingFull); return ok }):
		return bad("a scenario's backing store (its `backing` line) is a loop device's: an md array has none")
	case o.Limits != nil && o.Limits.LogicalBlockSize != max(w.LogicalBlockSize, 512):
		return bad("queue limits of %d-byte logical blocks for a device of %d-byte blocks", o.Limits.LogicalBlockSize, max(w.LogicalBlockSize, 512))
	case o.Limits != nil && w.Rules.Any():
		return bad("queue limits of their own and the device's rules (%s): give one", strings.TrimSpace(w.Rules.String()))
	}
	for _, s := range o.MRCSizes {
		if s < 1 || s > maxMRCSize {
			return bad("LRU size %d for the miss-ratio curve (want 1 to %d)", s, maxMRCSize)
		}
	}
	if o.Step != nil && o.Step.W == nil {
		return bad("step mode without a writer")
	}
	if s := o.ReplayTimeScale; s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return bad("replay time scale %v (want a factor of at least 0; 0 is 1)", s)
	}
	if w.Streamed && len(o.MRCSizes) > 0 {
		return bad("a miss-ratio curve reruns the workload once per LRU size, and %s is read in one pass (standard input, a pipe, or a file read as one): save a stream to a file, and read a file in two passes", w.Name)
	}
	return o, nil
}

// maxMRCSize bounds the LRU sizes of a miss-ratio curve
// (bufcache.MaxLRUSize).
const maxMRCSize = 1024

// mrcSizes is the curve's sizes in increasing order, with the kernel's.
func (o RunOptions) mrcSizes(kernel int) []int {
	sizes := []int{kernel}
	for _, s := range o.MRCSizes {
		dup := false
		for _, t := range sizes {
			dup = dup || s == t
		}
		if !dup {
			sizes = append(sizes, s)
		}
	}
	for i := 1; i < len(sizes); i++ { // insertion sort: a handful of sizes
		for j := i; j > 0 && sizes[j] < sizes[j-1]; j-- {
			sizes[j], sizes[j-1] = sizes[j-1], sizes[j]
		}
	}
	return sizes
}
