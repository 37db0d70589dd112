package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/iomap"
)

// ModelOptions say how RunModel builds the machine a scenario runs on.
type ModelOptions struct {
	// Kernel is the kernel preset whose variants the machine has; a Kernel
	// with no Name means the "6.18" preset, the kernel of the host
	// recordings.
	Kernel Kernel
	// Queue is the loop device's request-queue limits, as a kernel
	// recording's header gives them (Result.Queue); nil means a loop device
	// of Linux 6.18 with the scenario's logical block size
	// (blk.LoopLimits): 128 max_segments, 1280 KiB max_sectors_kb, 128 KiB
	// read_ahead_kb.
	Queue *scenario.QueueLimits
	// Check runs the machine's invariant checks (bufcache.Config.Check) at
	// every operation and once at the end; a violation is an error.
	Check bool
	// Profile, when not nil, times the run on the model's clock: each
	// operation's simulated elapsed time (OpResult.Wall) and the
	// scenario's (Result.Wall), its CPU work priced by Profile over the
	// device's Rules and its disk. Nil leaves the result untimed; a device
	// with throttle rules then still runs on the clock, priced by
	// timing.X86Server, for the requests the throttle's rounds form.
	Profile *timing.Profile
	// Disk prices the device's requests when Profile is set; nil means
	// LoopDisk, a loop device over a file on tmpfs.
	Disk blk.Model
}

// loopWBTLatency is a 6.18 loop queue's wbt_lat_usec as the host recorded
// it: blk-wbt's default target for a non-rotational queue, 2 ms.
const loopWBTLatency = 2 * time.Millisecond

// modelDevice names the model's loop device (only counters see it).
const modelDevice = "loop0"

// RunModel runs scenario s on the model — a machine of opts.Kernel's
// variants with one CPU, over a loop device of s's size behind a request
// queue with opts.Queue's limits — and returns what the kernel runner
// (bench/host) returns for the same scenario: per operation the calls made,
// bytes moved, errno, block size after opens and BLKBSZSET, a summary of the
// data read, the counters (bios, merges, requests, plugs, sectors, stat
// deltas, folios added and removed with their orders, dirtied folios and
// buffers, readahead windows, writeback errors) and the model's own event
// ledger (OpResult.Events), and every fsync's result. The result compares
// with a kernel recording through Compare.
//
// The device's rules apply as the host runner applies them: throttle
// rules (rbps, wbps, riops, wiops) on the clock (blk.Throttle, and the
// queue's throttle stage for the requests its rounds form); a scheduler
// puts every request through its insert (blk.Limits.Elevator; bfq turns
// wbt off); wbt=off turns write-back throttling off
// (blk.Limits.WriteThrottleDepth 0), and a wbt latency keeps its default
// depth (the model has no completion latencies for wbt to scale the depth
// by; a loop device's requests take tens of microseconds against any
// target the rule takes from 1 µs up, and wbt scales down only on reads
// that overshoot it); max_bytes and strict_limit give the machine a
// flusher on a CPU of its own and the task balance_dirty_pages on the
// clock (bufcache.DirtyThrottle, over 16 GiB of dirtyable memory, whose
// own thresholds no scenario reaches). With throttle rules or dirty
// limits the run is on the clock even without a Profile (the x86
// server's prices), since when things happen decides the requests.
//
// A failing call is a result (its errno), not an error, as on the host; an
// operation on a descriptor whose open failed gets EBADF. Errors: s does not
// validate, the kernel's variants or the queue limits are invalid, ctx is
// done (checked before each call), or a machine invariant broke with Check
// set. Cost: linear in the scenario's calls and bytes (at most MaxTotalIO).
func RunModel(ctx context.Context, s *scenario.Scenario, opts ModelOptions) (*scenario.Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	k := opts.Kernel
	if k.Name == "" {
		k = linux618()
	}
	spec := scenarioSpec(s)
	// A device with throttle rules or dirty limits runs on the clock even
	// untimed: the rounds the throttle releases, and when the flusher
	// writes back, decide the requests, and so the counts. Without a
	// profile, the x86 server's prices place the calls.
	clockProfile := opts.Profile
	if clockProfile == nil && (throttleRules(s.Device.Rules).Any() || dirtyLimited(s.Device.Rules)) {
		clockProfile = timing.X86Server()
	}
	if dirtyLimited(s.Device.Rules) { // the flusher, and balance_dirty_pages on the clock
		spec.flusher, spec.selfBalanced = true, true
	}
	if clockProfile != nil {
		spec.disk = opts.Disk
		if spec.disk == nil {
			spec.disk = LoopDisk()
		}
	}
	r, err := newModelRun(spec, k, opts)
	if err != nil {
		return nil, err
	}
	res := scenario.NewResult(s, scenario.RunnerModel)
	res.Kernel, res.Machine, res.PageSize = k.Name, "bhsim model", int(r.m.PageSize())
	res.Queue = r.limits
	if clockProfile != nil {
		if err := r.startClock(clockProfile, s.Device.Rules); err != nil {
			return nil, err
		}
	}
	timed := opts.Profile != nil
	wall := 0.0 // the operations' times: the host's total (totalWall) leaves its idle waits out
	r.rec.take()
	for i, op := range s.Ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		or := &res.Ops[i]
		events := r.cpu.Events()
		before := r.queue.BlockStat()
		opStart := r.now
		if err := r.exec(ctx, op, or); err != nil {
			return nil, fmt.Errorf("%s: op %d (%s): %w", s.Name, i+1, op, err)
		}
		if timed {
			or.Wall = scenario.SpanOf(time.Duration(r.now - opStart))
			wall += r.now - opStart
		}
		r.drain() // outside every time, as the host runner's idle wait
		r.rec.stat(before, r.queue.BlockStat())
		or.Counters = r.rec.take()
		or.Events = eventCounters(r.cpu.Events().Sub(events))
		switch op.(type) {
		case scenario.Fsync, scenario.Fdatasync:
			res.Fsyncs = append(res.Fsyncs, scenario.FsyncResult{Op: i + 1, FD: op.Descriptor(), Errno: or.Errno})
		}
	}
	if opts.Check {
		if err := r.m.Check(); err != nil {
			return nil, err
		}
	}
	if timed {
		res.Wall = scenario.SpanOf(time.Duration(wall))
	}
	res.Finish()
	return res, nil
}

// modelRun is one scenario's machine, device and open files.
type modelRun struct {
	m     *bufcache.Machine
	cpu   *bufcache.CPU
	queue *blk.Queue
	// array and members are the md array and its members' queues
	// (machineSpec.array; queue is then nil).
	array   *md.Array
	members []*blk.Queue
	mem     *blk.MemDisk
	dev     *bufcache.BlockDevice
	rec     *counting
	limits  *scenario.QueueLimits
	files   map[string]*bufcache.File
	// timed is the run's clock when it is timed (ModelOptions.Profile),
	// nil otherwise; now is when the task's CPU is next free.
	timed *modelClock
	now   float64
}

// machineSpec is the machine and device a runner builds: the device's
// size and logical block size, how many CPUs drive it (plus one for the
// flusher when flusher is set: background writeback runs there), the
// dirty and page-cache limits in folios (0: none), whether the device keeps
// page data, and the disk's service-time model (nil: blk.Null).
type machineSpec struct {
	size                   uint64
	logical                uint32
	cpus                   int
	flusher                bool
	dirtyLimit, cacheLimit int
	metadataOnly           bool
	disk                   blk.Model
	scheduler              string        // the device's sched rule, "" for the queue's
	wbt                    time.Duration // the device's wbt rule (scenario.Rules.WBT)
	// balancer is the machine's balance_dirty_pages (nil: dirtyLimit's
	// stand-in, or none); selfBalanced makes it the modelRun itself
	// (RunModel's dirty limits).
	balancer     bufcache.DirtyBalancer
	selfBalanced bool
	// array, if it has members, makes the device an md array of them
	// (RunOptions.Array); limits, if not nil, are its queue limits
	// (RunOptions.Limits).
	array  Array
	limits *blk.Limits
}

// RunOnQueue is RunModel with only the queue limits set: the scenario run
// on a device whose queue is q, as a kernel's loop device had it (nil: the
// model's default loop queue). It is the host calibration's ModelRunner.
func RunOnQueue(ctx context.Context, s *scenario.Scenario, q *scenario.QueueLimits) (*scenario.Result, error) {
	return RunModel(ctx, s, ModelOptions{Queue: q})
}

// scenarioSpec is the machine RunModel builds for s: one CPU, s's device
// with its data, a disk that takes no time.
func scenarioSpec(s *scenario.Scenario) machineSpec {
	return machineSpec{size: uint64(s.Device.Size), logical: uint32(s.Device.SectorSize()), cpus: 1,
		scheduler: s.Device.Rules.Scheduler, wbt: s.Device.Rules.WBT}
}

// newModelRun builds the machine of kernel k and the loop device of spec.
func newModelRun(spec machineSpec, k Kernel, opts ModelOptions) (*modelRun, error) {
	r := &modelRun{}
	// The scenario runner and the workload engine drive every CPU from the
	// calling goroutine (the engine interleaves them), so the machine is
	// confined.
	cfg := bufcache.Config{WriteIter: iomap.Writer(k.Write), Check: opts.Check, CPUs: spec.cpus,
		DirtyLimit: spec.dirtyLimit, Balancer: spec.balancer, PageCacheLimit: spec.cacheLimit, OneGoroutine: true}
	if spec.selfBalanced {
		cfg.Balancer = r
	}
	if spec.flusher { // and kswapd: the two kernel threads, after the streams' CPUs
		cfg.CPUs, cfg.SeparateFlusher, cfg.FlusherCPU = spec.cpus+2, true, spec.cpus
		cfg.Kswapd, cfg.KswapdCPU = true, spec.cpus+1
	}
	built, err := Build(MachineSpec{Kernel: &k, Config: cfg})
	if err != nil {
		return nil, err
	}
	m := built.Machine
	q := opts.Queue
	attrs := blk.QueueAttrs{LogicalBlockSize: spec.logical}
	if q != nil {
		attrs = QueueAttrs(q)
	}
	if spec.scheduler != "" {
		attrs.Scheduler = spec.scheduler
	}
	lim, err := blk.LoopLimitsFrom(attrs)
	if err != nil {
		return nil, err
	}
	if spec.limits != nil {
		lim = *spec.limits
	}
	lim.Version = k.Block
	switch { // written after the scheduler, as the host runner writes it
	case spec.wbt == scenario.WBTOff:
		lim.WriteThrottleDepth = 0
	case spec.wbt > 0 && spec.wbt != loopWBTLatency:
		// A new latency turns wbt on again (after bfq turned it off); the
		// queue's own value is no change at all (queue_wb_lat_store).
		lim.WriteThrottleDepth = blk.WBTDefaultDepth
	}
	disk := spec.disk
	if disk == nil {
		disk = blk.Null{}
	}
	*r = modelRun{m: m, cpu: m.CPU(0), rec: &counting{}, files: map[string]*bufcache.File{}}
	var dev blk.Device
	if spec.array.Members != 0 {
		if r.array, r.members, err = spec.array.newArray(spec.size, lim.LogicalBlockSize, disk, lim); err != nil {
			return nil, err
		}
		dev = r.array
	} else {
		if r.mem, err = blk.NewMemDisk(modelDevice, spec.size, lim.LogicalBlockSize); err != nil {
			return nil, err
		}
		if r.queue, err = blk.NewQueue(modelDevice, r.mem, disk, lim); err != nil {
			return nil, err
		}
		r.queue.SetTracer(blockTracer{r.rec})
		dev = r.queue
	}
	readAhead := uint32(0)
	if q != nil {
		readAhead = uint32(q.ReadAheadKB)
	}
	if r.dev, err = m.AddDisk(dev, bufcache.DeviceOptions{ReadAheadKB: readAhead, MetadataOnly: spec.metadataOnly}); err != nil {
		return nil, err
	}
	r.dev.SetTracer(r.rec)
	r.limits = q
	if q == nil {
		r.limits = loopQueueLimits(lim)
	}
	return r, nil
}

// QueueAttrs returns the limits q as package blk takes them
// (blk.LoopLimitsFrom builds the queue of a recorded loop device from them).
// O(1).
func QueueAttrs(q *scenario.QueueLimits) blk.QueueAttrs {
	return blk.QueueAttrs{LogicalBlockSize: uint32(q.LogicalBlockSize), PhysicalBlockSize: uint32(q.PhysicalBlockSize),
		MaxSectorsKB: uint32(q.MaxSectorsKB), MaxHWSectorsKB: uint32(q.MaxHWSectorsKB), MaxSegments: uint32(q.MaxSegments),
		MaxSegmentSize: uint32(q.MaxSegmentSize), WriteCache: q.WriteCache, FUA: q.FUA, Scheduler: q.Scheduler,
		NoMerges: q.NoMerges}
}

// loopQueueLimits describes the default loop queue lim as sysfs would
// (read_ahead_kb: bufcache's default, VM_READAHEAD_PAGES).
func loopQueueLimits(lim blk.Limits) *scenario.QueueLimits {
	wc := blk.WriteCacheThrough
	if lim.WriteCache {
		wc = blk.WriteCacheBack
	}
	return &scenario.QueueLimits{LogicalBlockSize: int(lim.LogicalBlockSize), PhysicalBlockSize: int(lim.PhysicalBlockSize),
		MinimumIOSize: int(lim.PhysicalBlockSize), MaxSectorsKB: int(lim.MaxSectors / 2), MaxHWSectorsKB: int(lim.MaxSectors / 2),
		MaxSegments: int(lim.MaxSegments), MaxSegmentSize: int(lim.MaxSegmentSize), Scheduler: "none",
		WriteCache: wc, FUA: lim.FUA, ReadAheadKB: 128}
}

// openFlags maps a scenario's open mode onto the model's flags.
var openFlags = map[scenario.Mode]bufcache.OpenFlags{scenario.ReadOnlyMode: bufcache.ORdOnly, scenario.WriteOnlyMode: bufcache.OWrOnly, scenario.ReadWriteMode: bufcache.ORdWr}

// exec runs one operation, filling its result: a failing call is its errno.
// The error is the runner's own failure (ctx done).
func (r *modelRun) exec(ctx context.Context, op scenario.Op, or *scenario.OpResult) error {
	f, open := r.files[op.Descriptor()]
	if _, isOpen := op.(scenario.Open); !isOpen && op.Descriptor() != "" && !open {
		or.Errno = "EBADF" // validated scenario: only a failed open leaves it missing
		return nil
	}
	var err error
	switch op.(type) {
	case scenario.Write, scenario.Read: // timed call by call
	case scenario.BackingFull: // the runner's change to the backing store
		r.beginCall(false, true, span{})
		defer r.endCall()
	default:
		r.beginCall(true, true, span{})
		defer r.endCall()
	}
	switch o := op.(type) {
	case scenario.Open:
		flags := openFlags[o.Mode]
		if o.Excl {
			flags |= bufcache.OpenExcl
		}
		or.Calls = 1
		if f, err = r.dev.Open(r.cpu, flags); err == nil {
			r.files[o.FD] = f
			or.BlockSize = int(f.BlockSize())
		}
	case scenario.Close:
		or.Calls = 1
		err = f.Close(r.cpu)
		delete(r.files, o.FD)
	case scenario.SetBlockSize:
		or.Calls = 1
		if err = f.SetBlocksize(r.cpu, int(o.Size)); err == nil {
			or.BlockSize = int(f.BlockSize())
		}
	case scenario.GetBlockSize:
		or.Calls = 1
		or.BlockSize = int(f.BlockSize())
	case scenario.Write:
		r.rec.setWriting(true)
		err = r.pwrites(ctx, f, o, or)
		r.rec.setWriting(false)
	case scenario.Read:
		err = r.preads(ctx, f, o, or)
	case scenario.Fsync:
		or.Calls = 1
		err = f.Fsync(r.cpu)
	case scenario.Fdatasync:
		or.Calls = 1
		err = f.Fdatasync(r.cpu)
	case scenario.DropCaches:
		or.Calls = 1
		err = f.FlushBuffers(r.cpu)
	case scenario.ReadOnly:
		or.Calls = 1
		err = f.SetReadOnly(r.cpu, o.On)
	case scenario.BackingFull:
		or.Calls = 1
		if o.Size != 0 {
			r.mem.SetBackingSize(uint64(o.Size))
		} else {
			r.mem.SetBackingFull(true)
		}
	default:
		return fmt.Errorf("operation %T not modelled", op)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	if err != nil {
		or.Errno = bufcache.ErrnoOf(err).String()
	}
	return nil
}

// pwrites makes o's calls from one user buffer of o.Fill bytes, stopping at
// the first failure.
func (r *modelRun) pwrites(ctx context.Context, f *bufcache.File, o scenario.Write, or *scenario.OpResult) error {
	data := make([]byte, o.Len)
	for i := range data {
		data[i] = o.Fill
	}
	buf := bufcache.NewUserBuf(data, 0, r.m.PageSize())
	for i := range o.Calls() {
		if err := ctx.Err(); err != nil {
			return err
		}
		it, err := buf.Iter(0, uint64(o.Len))
		if err != nil {
			return err
		}
		or.Calls++
		r.beginCall(true, false, span{})
		n, err := f.Pwrite(r.cpu, uint64(o.Off+int64(i)*o.Step()), it)
		r.endCall()
		or.Bytes += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// preads makes o's calls into one buffer and summarises the bytes read,
// stopping at the first failure.
func (r *modelRun) preads(ctx context.Context, f *bufcache.File, o scenario.Read, or *scenario.OpResult) error {
	buf := make([]byte, o.Len)
	var data []byte
	defer func() { or.Data = scenario.DataSummary(data) }()
	for i := range o.Calls() {
		if err := ctx.Err(); err != nil {
			return err
		}
		or.Calls++
		off := uint64(o.Off + int64(i)*o.Step())
		r.beginCall(true, false, span{off >> blk.SectorShift, (off + uint64(len(buf)) + 511) >> blk.SectorShift})
		n, err := f.Pread(r.cpu, off, buf)
		r.endCall()
		or.Bytes += int64(n)
		data = append(data, buf[:n]...)
		if err != nil {
			return err
		}
	}
	return nil
}

// eventCounters lists the model's nonzero events as counters named by
// bufcache.Event.String.
func eventCounters(ev bufcache.Counters) scenario.Counters {
	var cs scenario.CounterSet
	for e, n := range ev {
		if n > 0 {
			cs.Add(bufcache.Event(e).String(), n)
		}
	}
	return cs.Counters()
}
