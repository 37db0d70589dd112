package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// lookahead bounds the records Run reads ahead of the ones it runs, so that
// every CPU has its next record while memory stays bounded: when a trace
// gives one CPU more than this many records in a row, the others wait for
// theirs in trace order.
const lookahead = 4096

// runProgressEvery is how often, in records, Run calls the progress
// callback; runProgressInterval how long, at most, it goes without calling
// it, looking every 64 records, so that a run of slow records (large
// writes of real data) reports too, and its budget can be estimated.
const (
	runProgressEvery    = 1 << 16
	runProgressInterval = 250 * time.Millisecond
)

// cpuState is one stream CPU's clock and records.
type cpuState struct {
	cpu      *bufcache.CPU
	file     *bufcache.File
	free     float64         // when the CPU is next free
	inflight []float64       // completion times of operations in flight
	pending  fifo[source.IO] // records read, not yet run
	ops      uint64
	busyNS   float64
	start    bufcache.Counters // events before the run
	tap      eventTap          // its events since its last operation
	requests float64           // requests charged to it
	mqBios   float64           // bio passes through the queue charged to it (stepMeter.queued)
	// zeroReads and zeroBytes are its reads from /dev/zero
	// (RunOptions.FromZero) and the bytes they cleared; nullWrites its
	// writes to /dev/null (RunOptions.ToNull).
	zeroReads, zeroBytes, nullWrites uint64
	// closes is its closes of its file (RunOptions.LastClose): a system
	// call each, as its operations are.
	closes uint64
	// md is the md layer's work charged to it (RunOptions.Array; mdTap).
	md timing.Quantities
	// task is its dirty throttling state; unweighed the pages it dirtied
	// that no balance_dirty_pages pass has counted yet (the iomap write
	// path looks before it dirties each folio, so a call's last folio
	// is counted by the next call's first look).
	task      bufcache.DirtyTask
	unweighed int64
	// near is how many records at the front of pending were prefetched
	// when they were already near their turn (batchReader.backlog).
	near int
}

// kindStats accumulates one kind of operation.
type kindStats struct {
	hist             latencyHist
	bytes            uint64
	bios, requests   uint64
	errors           uint64
	errnos           map[string]uint64
	lruLook, lruHits uint64
}

// engine is one run of a workload.
type engine struct {
	w    Workload
	o    RunOptions
	k    Kernel
	mr   *modelRun
	cpus []cpuState
	// fl is the flusher, on the CPU after the streams', with the device's
	// dirty throttling.
	fl *flusher
	// kswapd is kswapd's CPU context: a thread that shares the CPUs.
	kswapd  *bufcache.CPU
	ksStart bufcache.Counters
	flStart bufcache.Counters
	// clk is the run's clock: the disk, its requests and the throttle;
	// meter the queue's block steps of the call under way.
	clk   clock
	meter stepMeter
	op    opCall
	end   float64
	// lastCloseNS is the time of the device's last close
	// (RunOptions.LastClose).
	lastCloseNS float64
	kinds       [source.IODiscard + 1]kindStats
	tl          timeline
	buf         []byte
	ubuf        *bufcache.UserBuf
	// ubufLen is ubuf's size.
	ubufLen uint64
	iov     bufcache.IovIter // the write calls' iterator, reset for each
	done    uint64
	bytes   uint64
	step    *stepper
	// clock0 is the first record's time stamp, the trace's start
	// (replayAt), once clockSet.
	clock0   uint64
	clockSet bool
}

// opCall is the operation under way: its CPU, its start, and what has been
// placed on the clock of it so far — its CPU time, sleeps and completion,
// the bios and requests it made — in segments: the work before each of its
// balance_dirty_pages passes is placed before the flusher's passes that
// pass lets run, as the disk sees them in that order.
type opCall struct {
	callTime
	c *cpuState
	// write says it is a buffered write, which submits no writes of its
	// own.
	write bool
	// dirtied is the device's pages dirtied when the call last looked
	// (bufcache.BlockDevice.DirtiedPages).
	dirtied          int64
	lruLook, lruHits uint64
	bios, requests   uint64
	// sys is the system call's entry and exit (timing.ParamSyscall), which
	// the call's first segment pays, as a timed scenario's does; 0 after.
	// With RunOptions.FromZero a write's sys is also the read(2) of its
	// data from /dev/zero before it, and zeroed the bytes that read
	// cleared (timing.ParamZeroByte), which the first segment puts on the
	// memory bus; 0 after.
	sys    float64
	zeroed uint64
}

// newEngine builds the machine and opens the device once per stream CPU,
// as N processes would.
func newEngine(w Workload, o RunOptions, k Kernel) (*engine, error) {
	lbs := w.LogicalBlockSize
	if lbs == 0 {
		lbs = 512
	}
	page := uint64(4096)
	e := &engine{w: w, o: o, k: k}
	// The page cache may hold three quarters of the memory; the rest is
	// the kernel's and the processes'. That is also the dirtyable memory
	// (global_dirtyable_memory, v6.18: the free pages and the file pages,
	// what the page cache can grow into), which the dirty thresholds are
	// ratios of.
	cacheLimit := o.MemoryBytes / 4 * 3 / page
	spec := machineSpec{size: w.DeviceSize, logical: lbs, cpus: o.CPUs, flusher: true,
		cacheLimit: int(cacheLimit), balancer: e,
		metadataOnly: !o.Data, disk: o.Disk.Model, scheduler: w.Rules.Scheduler, wbt: w.Rules.WBT, array: o.Array, limits: o.Limits}
	mr, err := newModelRun(spec, k, ModelOptions{Kernel: k, Check: o.Check})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunOptions, err)
	}
	e.mr, e.kswapd = mr, mr.m.CPU(o.CPUs+1)
	thr, err := bufcache.NewDirtyThrottle(bufcache.DirtyLimits{Dirtyable: int64(cacheLimit),
		MaxBytes: w.Rules.MaxBytes, StrictLimit: w.Rules.StrictLimit, HZ: blk.DefaultHZ, CPUs: o.CPUs})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunOptions, err)
	}
	if tr := throttleRules(w.Rules); tr.Any() {
		if e.clk.thr, err = blk.NewThrottle(tr, blk.DefaultHZ); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRunOptions, err)
		}
	}
	e.fl = newFlusher(thr, mr.dev, mr.m.CPU(o.CPUs), &e.clk, &e.meter, o.Profile)
	e.clk.ended, e.clk.bus.p = mr.dev.WrittenPages, o.Profile
	if mr.array != nil {
		for i, q := range mr.members {
			q.SetTracerKinds(memberTracer{&e.meter, mr.array, uint8(i)}, meterKinds)
		}
		e.clk.md = newMDTap(mr.array, len(mr.members))
	} else {
		mr.queue.SetTracerKinds(&e.meter, meterKinds)
	}
	mr.dev.SetTracer(nil)
	for _, op := range w.Setup { // a scenario's lines before its I/O, as RunModel makes them
		var or scenario.OpResult
		if err := mr.exec(context.Background(), op, &or); err != nil {
			return nil, err
		}
	}
	e.meter.reset()
	e.cpus = make([]cpuState, o.CPUs)
	for i := range e.cpus {
		c := &e.cpus[i]
		c.cpu = mr.m.CPU(i)
		if c.file, err = mr.dev.Open(c.cpu, bufcache.ORdWr); err != nil {
			return nil, err
		}
	}
	if o.SetBlocksize != 0 { // after the opens, as dd's BLKBSZSET after its open
		if err := mr.dev.SetBlocksize(e.cpus[0].cpu, o.SetBlocksize); err != nil {
			return nil, fmt.Errorf("%w: kernel %s: %w", ErrRunOptions, k.Name, err)
		}
	}
	for i := range e.cpus {
		c := &e.cpus[i]
		c.start = c.cpu.Events()
		c.tap = newEventTap(c.cpu)
		c.inflight = make([]float64, 0, o.QueueDepth)
		c.task = thr.NewTask()
	}
	e.flStart, e.ksStart = e.fl.cpu.Events(), e.kswapd.Events()
	e.fl.tap.sync()
	if o.Step != nil {
		e.step = newStepper(e, *o.Step)
		e.clk.finished = e.step.noteRequest
	}
	e.meter.runs = e.clk.thr == nil && e.step == nil
	return e, nil
}

// run reads and runs every record.
func (e *engine) run(ctx context.Context, rd source.IOReader) error {
	eof := false
	reported := time.Now() // the last progress report, or the start
	buffered := 0
	ra := &batchReader{rd: rd, dev: e.mr.dev}
	for {
		// Read until every CPU has its next record, the input ends, or the
		// look-ahead is full.
		for !eof && buffered < lookahead && e.anyEmpty() {
			rec, err := ra.next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return err
			}
			if err := rec.Valid(); err != nil {
				return &source.TraceError{File: e.w.Name, Line: rec.Line, Msg: "invalid record: " + err.Error()}
			}
			if err := rec.CheckDevice(e.w.DeviceSize); err != nil {
				var te *source.TraceError
				if errors.As(err, &te) && te.File == "" {
					te.File = e.w.Name
				}
				return err
			}
			if e.o.cpusFixed && rec.CPU >= len(e.cpus) {
				return &source.TraceError{File: e.w.Name, Line: rec.Line, Msg: fmt.Sprintf("a record of CPU %d, but a trace read in one pass runs on 1 CPU unless told how many: its CPUs are not known before its end; give the CPUs to run on (RunOptions.CPUs)", rec.CPU)}
			}
			c := &e.cpus[rec.CPU%len(e.cpus)]
			c.pending.push(*rec)
			c.pending.back().At = e.replayAt(rec.At)
			buffered++
		}
		i, start := e.next()
		if i < 0 {
			if eof && e.done == 0 {
				return &source.TraceError{File: e.w.Name, Msg: "no records: an empty workload has nothing to simulate", Err: source.ErrNoRecords}
			}
			if eof {
				break
			}
			continue
		}
		c := &e.cpus[i]
		ra.backlog(c)
		rec := c.pending.pop()
		buffered--
		if err := e.exec(i, rec, start); err != nil {
			return err
		}
		e.done++
		if e.done%64 == 0 { // a dd's record can be 64 MiB: a Ctrl-C waits for 64 of them at most
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e.o.Progress != nil && (e.done%runProgressEvery == 0 || e.done%64 == 0 && time.Since(reported) >= runProgressInterval) {
			e.o.Progress(e.done, e.total(rd))
			reported = time.Now()
		}
	}
	if e.o.Progress != nil {
		e.o.Progress(e.done, max(e.w.Records, e.done)) // at the end, every record is counted
	}
	if e.o.LastClose {
		if err := e.closeFiles(); err != nil {
			return err
		}
	}
	e.fl.finish() // the background writeback still under way when the records end
	e.end = max(e.end, e.fl.free, e.clk.diskFree())
	if e.o.Check {
		return e.mr.m.Check()
	}
	return nil
}

// replayAt is when a record stamped at is issued in simulated time: the
// trace's clock starts at its first record (a record stamped before it
// is issued at 0), the time since then scaled by ReplayTimeScale; always
// 0 with ReplayNoStall.
func (e *engine) replayAt(at uint64) uint64 {
	if !e.clockSet {
		e.clockSet, e.clock0 = true, at
	}
	if e.o.ReplayNoStall || at <= e.clock0 {
		return 0
	}
	d := at - e.clock0
	if s := e.o.ReplayTimeScale; s != 0 && s != 1 {
		if f := float64(d) * s; f < 1<<63 {
			return uint64(f)
		}
		return 1 << 63
	}
	return d
}

// total is the records the run will have done, for its progress: the
// workload's Records; for a trace read in one pass, which has none, an
// estimate from its reader's progress through its file
// (source.Prefetcher.Progress: the records read per byte of the file read,
// a little low), at least one more than done; 0 when not known (a
// stream). O(1).
func (e *engine) total(rd source.IOReader) uint64 {
	if e.w.Records > 0 {
		return e.w.Records
	}
	p, ok := rd.(interface{ Progress() (uint64, int64, int64) })
	if !ok {
		return 0
	}
	records, read, size := p.Progress()
	if read <= 0 || size <= 0 {
		return 0
	}
	return max(e.done+1, uint64(float64(records)*float64(size)/float64(read)))
}

// anyEmpty reports whether a CPU has no record waiting.
func (e *engine) anyEmpty() bool {
	for i := range e.cpus {
		if e.cpus[i].pending.empty() {
			return true
		}
	}
	return false
}

// next picks the CPU whose next record can start first (ties: the lower
// CPU) and that start time; -1 when no CPU has a record.
func (e *engine) next() (int, float64) {
	best, bestT := -1, 0.0
	for i := range e.cpus {
		c := &e.cpus[i]
		if c.pending.empty() {
			continue
		}
		t := max(c.free, float64(c.pending.front().At))
		if len(c.inflight) == cap(c.inflight) {
			t = max(t, minOf(c.inflight))
		}
		if best < 0 || t < bestT {
			best, bestT = i, t
		}
	}
	return best, bestT
}

// minOf is the smallest of xs (xs not empty).
func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

// exec runs rec on stream CPU i from simulated time start and accounts
// for its time: the flusher's passes due by then go first, the record's
// call is placed on the clock (in segments around its
// balance_dirty_pages passes, BalanceDirtyPages), and it completes when
// its CPU work, its sleeps and the I/O it waits for are done; a sync
// also waits for the writeback under way.
func (e *engine) exec(i int, rec source.IO, start float64) error {
	c := &e.cpus[i]
	if len(c.inflight) == cap(c.inflight) {
		c.retireEarliest()
	}
	e.fl.runUntil(start)
	e.clk.forget(start) // no later record starts before start
	if e.step != nil {
		e.step.before(i, rec, start)
	}
	sync := rec.Kind == source.IOFsync || rec.Kind == source.IOFdatasync || rec.Kind == source.IOFlush
	o := e.beginCall(c, start, sync || rec.Kind == source.IODiscard)
	o.write = rec.Kind == source.IOWrite
	if rec.Kind == source.IORead {
		o.rd = span{rec.Offset >> blk.SectorShift, (rec.End() + 511) >> blk.SectorShift}
	}
	if o.write && e.o.FromZero {
		p := e.o.Profile
		o.sys += p.NS[timing.ParamSyscall] + float64(rec.Length)*p.NS[timing.ParamZeroByte]
		o.zeroed = rec.Length
		c.zeroReads++
		c.zeroBytes += rec.Length
	}
	if rec.Kind == source.IORead && e.o.ToNull {
		o.sys += e.o.Profile.NS[timing.ParamSyscall]
		c.nullWrites++
	}
	err := e.do(c, rec)
	ks := &e.kinds[rec.Kind]
	if err != nil {
		ks.noteError(err)
	}
	done := e.endCall()
	c.inflight = append(c.inflight, done)
	c.ops++
	e.account(ks, rec, done-start, done)
	if e.step != nil {
		e.step.after(i, rec, start, o.cpuNS, done, err)
		if e.step.err != nil {
			return e.step.err
		}
	}
	if e.o.Check {
		return e.mr.m.Check()
	}
	return nil
}

// closeFiles is RunOptions.LastClose: each stream CPU closes its file
// when its operations are done, the earliest first (ties to the lower
// CPU), each close a call on the clock. The last one's is the device's
// last close unless the workload's setup left a file open: it writes the
// device back and drops its page cache (bufcache.File.Close), and waits
// for its writes; the others only release their file. lastCloseNS is the
// last close's time. Errors: bufcache.File.Close's (none for files the
// run opened and nothing else closes).
func (e *engine) closeFiles() error {
	order := make([]int, len(e.cpus))
	for i := range order {
		order[i] = i
	}
	idle := func(c *cpuState) float64 {
		t := c.free
		for _, done := range c.inflight {
			t = max(t, done)
		}
		return t
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(idle(&e.cpus[a]), idle(&e.cpus[b])) })
	for k, i := range order {
		c := &e.cpus[i]
		start := idle(c)
		e.fl.runUntil(start)
		last := k == len(order)-1
		if e.step != nil {
			e.step.beforeClose()
		}
		o := e.beginCall(c, start, last)
		err := c.file.Close(c.cpu)
		done := e.endCall()
		e.lastCloseNS = done - start
		c.closes++
		if e.step != nil {
			e.step.closed(i, last, start, o.cpuNS, done, err)
			if e.step.err != nil {
				return e.step.err
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// beginCall starts the call of CPU c at start, which waits for its
// writes when wait says so: its CPU's events and the block steps are
// counted from here, and its first segment pays its system call's entry
// and exit. The caller has run the flusher's passes due by start.
func (e *engine) beginCall(c *cpuState, start float64, wait bool) *opCall {
	// Cleared, then set field by field: a literal is built on the stack
	// and copied with wide loads that wait for its narrow stores.
	o := &e.op
	*o = opCall{}
	o.start, o.wait, o.done = start, wait, start
	o.c, o.dirtied, o.sys = c, e.mr.dev.DirtiedPages(), e.o.Profile.NS[timing.ParamSyscall]
	c.tap.sync()
	e.meter.reset()
	return o
}

// endCall places the rest of the call under way on the clock and returns
// its completion: when its CPU work, its sleeps and the I/O it waits for
// are done (a sync also waits for the writeback under way). Its CPU is
// free when its work and sleeps are.
func (e *engine) endCall() float64 {
	o := &e.op
	c := o.c
	e.placeSegment()
	c.unweighed += e.mr.dev.DirtiedPages() - o.dirtied
	done := e.clk.end(&o.callTime)
	c.free = o.at()
	c.busyNS += o.cpuNS
	c.requests += float64(o.requests)
	e.end = max(e.end, done)
	return done
}

// placeSegment places the part of the call under way not yet on the
// clock: its CPU's events since the last segment, priced with the
// requests and bios it submitted (blockNS) and, in its first segment, its
// system call's entry and exit (and a read from /dev/zero before a write,
// RunOptions.FromZero), from where the call has got to (its start, CPU
// time and sleeps so far), with the block steps it made.
func (e *engine) placeSegment() {
	o := &e.op
	passes := streams{copied: o.c.tap.copied(), zeroed: o.zeroed}
	ns, look, hits := o.c.tap.take(e.o.Profile)
	ns, o.sys, o.zeroed = ns+o.sys, 0, 0
	steps := e.meter.steps
	if ns == 0 && len(steps) == 0 {
		return
	}
	issued, queued := e.meter.issued, e.meter.queued
	if o.write {
		steps, issued, queued = e.fl.takeWrites(steps, o.at())
	}
	if e.clk.md != nil {
		var mdNS float64
		mdNS, issued, queued = e.clk.md.charge(e.o.Profile, &o.c.md, issued, queued)
		ns += mdNS
	}
	ns = e.clk.bus.cpu(o.at(), ns+blockNS(e.o.Profile, issued, queued), passes)
	o.c.mqBios += float64(queued)
	e.clk.segment(&o.callTime, steps, ns)
	o.lruLook += look
	o.lruHits += hits
	for _, st := range steps {
		switch {
		case st.kind == blk.TraceBioQueue:
			o.bios += uint64(st.bios())
		case st.kind == blk.TraceRqIssue:
			o.requests += max(st.reqs, 1)
		}
	}
	if e.step != nil {
		e.step.noteSteps(steps)
	}
	e.meter.reset()
}

// BalanceDirtyPages implements bufcache.DirtyBalancer for the machine's
// write paths: the call under way has dirtied pages; when they are due
// (DirtyThrottle.Dirtied), the flusher weighs them at the call's moment,
// and the call sleeps as balance_dirty_pages says (flusher.balance), its
// work so far placed first. The moment is priced only then: most calls
// find their pages not yet due.
func (e *engine) BalanceDirtyPages(_ *bufcache.CPU, d *bufcache.BlockDevice) {
	o := &e.op
	n := d.DirtiedPages() - o.dirtied + o.c.unweighed
	o.dirtied, o.c.unweighed = d.DirtiedPages(), 0
	pages, run := e.fl.thr.Dirtied(&o.c.task, n)
	if !run {
		return
	}
	now := o.at() + e.clk.bus.stretch(o.at(), o.sys+o.c.tap.peek(e.o.Profile)+blockNS(e.o.Profile, e.meter.issued, e.meter.queued), streams{copied: o.c.tap.copied(), zeroed: o.zeroed})
	o.slept += e.fl.balance(&o.c.task, pages, now, e.settleCall)
}

// settleCall brings the clock to t inside a call: the call's work so far,
// then the flusher's passes due by t.
func (e *engine) settleCall(t float64) {
	e.placeSegment()
	e.fl.runUntil(t)
}

// retireEarliest removes the earliest completion of the CPU's operations
// in flight (inflight not empty), making room for one more. O(queue depth).
func (c *cpuState) retireEarliest() {
	j := 0
	for k, t := range c.inflight {
		if t < c.inflight[j] {
			j = k
		}
	}
	c.inflight[j] = c.inflight[len(c.inflight)-1]
	c.inflight = c.inflight[:len(c.inflight)-1]
}

// noteError counts an operation's error (not nil) by its errno.
func (ks *kindStats) noteError(err error) {
	ks.errors++
	if ks.errnos == nil {
		ks.errnos = map[string]uint64{}
	}
	ks.errnos[bufcache.ErrnoOf(err).String()]++
}

// account adds operation rec, of latency lat and done at done, to its
// kind's statistics ks (with the bios, requests and bh LRU lookups and
// hits of its call) and the run's timeline and bytes moved (a read's or
// write's length).
func (e *engine) account(ks *kindStats, rec source.IO, lat, done float64) {
	o := &e.op
	ks.hist.add(lat)
	ks.bytes += rec.Length
	ks.bios += o.bios
	ks.requests += o.requests
	ks.lruLook += o.lruLook
	ks.lruHits += o.lruHits
	moved := uint64(0)
	if rec.Kind == source.IORead || rec.Kind == source.IOWrite {
		moved = rec.Length
	}
	e.tl.add(done, moved)
	e.bytes += moved
}

// maxCall bounds one pread or pwrite call: a longer record is split into
// calls of this size, so that the runner's buffer stays bounded.
const maxCall = 16 << 20

// do performs rec on c's CPU through the access path; the error is the
// call's (an errno for the result), not the runner's.
func (e *engine) do(c *cpuState, rec source.IO) error {
	switch rec.Kind {
	case source.IOFsync:
		return c.file.Fsync(c.cpu)
	case source.IOFdatasync, source.IOFlush:
		return c.file.Fdatasync(c.cpu)
	case source.IODiscard:
		return e.discard(c, rec)
	}
	if e.o.Access == AccessBuffers || e.o.Access == AccessAuto && rec.Flags&source.FlagMeta != 0 {
		return e.buffers(c, rec)
	}
	for off := uint64(0); off < rec.Length; off += maxCall {
		n := min(rec.Length-off, maxCall)
		var err error
		if rec.Kind == source.IORead {
			_, err = c.file.Pread(c.cpu, rec.Offset+off, e.readBuf(n))
		} else {
			if err = e.iov.Reset(e.userBuf(n), 0, n); err == nil {
				_, err = c.file.Pwrite(c.cpu, rec.Offset+off, &e.iov)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readBuf returns a buffer of n bytes, reused between calls.
func (e *engine) readBuf(n uint64) []byte {
	if uint64(cap(e.buf)) < n {
		e.buf = make([]byte, n)
	}
	return e.buf[:n]
}

// userBuf returns a user buffer of at least n bytes, reused between calls:
// of real bytes with page data, metadata-only without.
func (e *engine) userBuf(n uint64) *bufcache.UserBuf {
	if e.ubuf == nil || e.ubufLen < n {
		ps := e.mr.m.PageSize()
		if e.o.Data {
			e.ubuf = bufcache.NewUserBuf(make([]byte, n), 0, ps)
		} else {
			e.ubuf = bufcache.NewUserBufSize(n, 0, ps)
		}
		e.ubufLen = n
	}
	return e.ubuf
}

// buffers performs a read or write block by block through the buffer
// cache (AccessBuffers).
func (e *engine) buffers(c *cpuState, rec source.IO) error {
	d := e.mr.dev
	bs := d.BlockSize()
	first, last, headCut, tailCut := rec.Blocks(bs)
	for b := first; b <= last; b++ {
		partial := b == first && headCut || b == last && tailCut
		var bh *bufcache.BufferHead
		var err error
		if rec.Kind == source.IORead || partial {
			bh, err = d.Bread(c.cpu, b, bs)
		} else {
			bh, err = d.Getblk(c.cpu, b, bs)
			if err == nil {
				bh.SetUptodate(c.cpu) // the whole block is about to be written
			}
		}
		if err != nil {
			return err
		}
		if rec.Kind == source.IOWrite {
			bufcache.MarkBufferDirty(c.cpu, bh)
		}
		bufcache.Brelse(c.cpu, bh)
	}
	if rec.Kind == source.IOWrite {
		d.BalanceDirtyPages(c.cpu)
	}
	return nil
}

// loads are the run's resources for the bottleneck bound: each stream CPU
// with its events and the requests it submitted, the flusher, kswapd (a
// thread on those CPUs, not one of its own), all CPUs together, the memory
// bus with the bytes the clock put on it (memBus: under a profile with a
// memory-stall share its load stretches the CPUs', timing.Profile.Contended),
// the disk with its busy time, and the throttle's rules.
func (e *engine) loads() []timing.Load {
	var cpus []timing.Load
	for i := range e.cpus {
		c := &e.cpus[i]
		l := timing.CPULoad(fmt.Sprintf("cpu%d", i), timing.PerOp(c.cpu.Events().Sub(c.start), 1, 0))
		l.Q[timing.ParamRequest] = c.requests
		l.Q[timing.ParamMQBio] = c.mqBios
		l.Q[timing.ParamSyscall] = float64(c.ops + c.zeroReads + c.nullWrites + c.closes)
		l.Q[timing.ParamZeroByte] = float64(c.zeroBytes)
		addQuantities(&l.Q, &c.md)
		cpus = append(cpus, l)
	}
	fl := timing.CPULoad(fmt.Sprintf("cpu%d (flusher)", len(e.cpus)), timing.PerOp(e.fl.cpu.Events().Sub(e.flStart), 1, 0))
	fl.Q[timing.ParamRequest] = e.fl.reqs
	fl.Q[timing.ParamMQBio] = e.fl.bios
	addQuantities(&fl.Q, &e.fl.md)
	cpus = append(cpus, fl)
	servers := len(cpus)
	cpus = append(cpus, timing.CPULoad("kswapd0", timing.PerOp(e.kswapd.Events().Sub(e.ksStart), 1, 0)))
	if e.clk.md != nil && e.clk.md.raid6 { // raid5d: a thread on the CPUs, as kswapd
		cpus = append(cpus, timing.CPULoad("md0_raid6", e.clk.md.thread))
	}
	loads := append(cpus, timing.AllCPUs(servers, cpus...))
	var bus timing.Quantities
	bus[timing.ParamMemByte] = e.clk.bus.bytes
	loads = append(loads, timing.MemoryLoad(bus))
	if e.mr.array == nil {
		loads = append(loads, timing.Load{Name: "disk (" + e.o.Disk.Name + ")", FixedNS: e.clk.diskBusy(), Servers: 1})
	}
	for i, q := range e.mr.members {
		busy := 0.0
		if i < len(e.clk.disks) {
			busy = e.clk.disks[i].busy
		}
		loads = append(loads, timing.Load{Name: q.Name() + " (" + e.o.Disk.Name + ")", FixedNS: busy, Servers: 1})
	}
	return append(loads, e.throttleLoads()...)
}

// addQuantities adds q to sum. O(parameters).
func addQuantities(sum, q *timing.Quantities) {
	for i, n := range q {
		sum[i] += n
	}
}

// throttleLoads are the device's blk-throttle rules as resources, one per
// direction that has one: the time the rule needs for the direction's
// bios and bytes, the larger of bytes / bps and bios / iops (a rule's
// first slice lets a burst through at once, so a run can beat it by up to
// a tenth of a second). None without rules.
func (e *engine) throttleLoads() []timing.Load {
	r := throttleRules(e.w.Rules)
	if !r.Any() {
		return nil
	}
	st := e.mr.queue.Stats()
	var loads []timing.Load
	for _, d := range []struct {
		name string
		bps  uint64
		iops uint32
		s    blk.OpStats
	}{{"blk-throttle (reads)", r.ReadBPS, r.ReadIOPS, st.Read}, {"blk-throttle (writes)", r.WriteBPS, r.WriteIOPS, st.Write}} {
		if d.bps == 0 && d.iops == 0 {
			continue
		}
		ns := 0.0
		if d.bps > 0 {
			ns = float64(d.s.Sectors<<blk.SectorShift) * 1e9 / float64(d.bps)
		}
		if d.iops > 0 {
			ns = max(ns, float64(d.s.Bios)*1e9/float64(d.iops))
		}
		loads = append(loads, timing.Load{Name: d.name, FixedNS: ns, Servers: 1})
	}
	return loads
}

// finite is v, or 0 when v is not a finite number (a rate over no time).
func finite(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}
