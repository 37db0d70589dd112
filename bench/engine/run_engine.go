package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

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

// runProgressEvery is how often, in records, Run calls the progress callback.
const runProgressEvery = 1 << 16

// meterReq is one request issued during an operation: its direction and
// the disk model's service time; or, for a discard, its n requests and
// their service time together (a read or write has n 0: one request).
type meterReq struct {
	op    blk.Op
	bytes uint64
	svc   float64
	n     uint64
}

// count is the requests r stands for.
func (r meterReq) count() uint64 { return max(r.n, 1) }

// meter is the queue's tracer during Run: it counts the bios and requests
// of the operation under way and keeps each request's service time, and in
// step mode the bios themselves. It allocates nothing once its slices have
// grown to an operation's requests.
type meter struct {
	bios     int
	reqs     []meterReq
	keepBios bool
	bioList  []blk.TraceEvent
	// discards are a discard's bios (sector, sectors) in step mode: the
	// queue has no discard bio to trace.
	discards [][2]uint64
}

// Trace implements blk.Tracer.
func (m *meter) Trace(e blk.TraceEvent) {
	switch e.Kind {
	case blk.TraceBioQueue:
		m.bios++
		if m.keepBios {
			e.Err = nil
			m.bioList = append(m.bioList, e)
		}
	case blk.TraceRqIssue:
		m.reqs = append(m.reqs, meterReq{op: e.Op, bytes: e.Bytes, svc: e.ServiceNS})
	}
}

// reset starts a new operation.
func (m *meter) reset() {
	m.bios, m.reqs, m.bioList, m.discards = 0, m.reqs[:0], m.bioList[:0], m.discards[:0]
}

// cpuState is one stream CPU's clock and records.
type cpuState struct {
	cpu      *bufcache.CPU
	file     *bufcache.File
	free     float64     // when the CPU is next free
	inflight []float64   // completion times of operations in flight
	pending  []source.IO // records read, not yet run
	head     int
	ops      uint64
	busyNS   float64
	start    bufcache.Counters // events before the run
	tap      eventTap          // its events since its last operation
	requests float64           // requests charged to it
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
	w       Workload
	o       RunOptions
	k       Kernel
	mr      *modelRun
	cpus    []cpuState
	flusher *bufcache.CPU
	flTap   eventTap // the flusher's events since the last operation
	flStart bufcache.Counters
	// kswapd is kswapd's CPU context: a thread that shares the CPUs.
	kswapd  *bufcache.CPU
	ksStart bufcache.Counters
	flFree  float64
	flBusy  float64
	flReqs  float64
	// clk is the run's clock: the disk's queue of requests.
	clk     clock
	end     float64
	meter   meter
	kinds   [source.IODiscard + 1]kindStats
	tl      timeline
	buf     []byte
	ubuf    *bufcache.UserBuf
	ubufLen uint64
	iov     bufcache.IovIter // the write calls' iterator, reset for each
	done    uint64
	bytes   uint64
	step    *stepper
	// wb is the writeback under way in simulated time: the flusher's
	// requests not yet complete, in completion order (the disk is FCFS),
	// and their pages; wbLimit is the dirty limit they are held to.
	wb      []wbEntry
	wbHead  int
	wbPages uint64
	wbLimit uint64
	// clock0 is the first record's time stamp, the trace's start
	// (replayAt), once clockSet.
	clock0   uint64
	clockSet bool
}

// wbEntry is one writeback request: when it completes and its pages.
type wbEntry struct {
	done  float64
	pages uint64
}

// newEngine builds the machine and opens the device once per stream CPU,
// as N processes would.
func newEngine(w Workload, o RunOptions, k Kernel) (*engine, error) {
	lbs := w.LogicalBlockSize
	if lbs == 0 {
		lbs = 512
	}
	page := uint64(4096)
	spec := machineSpec{size: w.DeviceSize, logical: lbs, cpus: o.CPUs, flusher: true,
		dirtyLimit: int(o.MemoryBytes / 10 / page), cacheLimit: int(o.MemoryBytes / 4 * 3 / page),
		metadataOnly: !o.Data, disk: o.Disk.Model}
	mr, err := newModelRun(spec, k, ModelOptions{Kernel: k, Check: o.Check})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunOptions, err)
	}
	e := &engine{w: w, o: o, k: k, mr: mr, flusher: mr.m.CPU(o.CPUs), kswapd: mr.m.CPU(o.CPUs + 1), wbLimit: uint64(spec.dirtyLimit)}
	mr.queue.SetTracer(&e.meter)
	mr.dev.SetTracer(nil)
	for _, op := range w.Setup { // a scenario's lines before its I/O, as RunModel makes them
		var or scenario.OpResult
		if err := mr.exec(context.Background(), op, &or); err != nil {
			return nil, err
		}
	}
	e.cpus = make([]cpuState, o.CPUs)
	for i := range e.cpus {
		c := &e.cpus[i]
		c.cpu = mr.m.CPU(i)
		if c.file, err = mr.dev.Open(c.cpu, bufcache.ORdWr); err != nil {
			return nil, err
		}
		c.start = c.cpu.Events()
		c.tap = newEventTap(c.cpu)
		c.inflight = make([]float64, 0, o.QueueDepth)
	}
	e.flStart, e.ksStart = e.flusher.Events(), e.kswapd.Events()
	e.flTap = newEventTap(e.flusher)
	if o.Step != nil {
		e.step = newStepper(e, *o.Step)
		e.meter.keepBios = true
	}
	return e, nil
}

// run reads and runs every record.
func (e *engine) run(ctx context.Context, rd source.IOReader) error {
	eof := false
	buffered := 0
	for {
		// Read until every CPU has its next record, the input ends, or the
		// look-ahead is full.
		for !eof && buffered < lookahead && e.anyEmpty() {
			rec, err := rd.Next()
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
			rec.At = e.replayAt(rec.At)
			c := &e.cpus[rec.CPU%len(e.cpus)]
			c.pending = append(c.pending, rec)
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
		rec := c.pending[c.head]
		c.head++
		if c.head*2 >= len(c.pending) { // keep the queue's array at its live records
			c.pending = c.pending[:copy(c.pending, c.pending[c.head:])]
			c.head = 0
		}
		buffered--
		if err := e.exec(i, rec, start); err != nil {
			return err
		}
		e.done++
		if e.done%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e.o.Progress != nil && e.done%runProgressEvery == 0 {
			e.o.Progress(e.done, e.w.Records)
		}
	}
	if e.o.Progress != nil {
		e.o.Progress(e.done, e.w.Records)
	}
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

// anyEmpty reports whether a CPU has no record waiting.
func (e *engine) anyEmpty() bool {
	for i := range e.cpus {
		if e.cpus[i].head == len(e.cpus[i].pending) {
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
		if c.head == len(c.pending) {
			continue
		}
		t := max(c.free, float64(c.pending[c.head].At))
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
// for its time.
func (e *engine) exec(i int, rec source.IO, start float64) error {
	c := &e.cpus[i]
	if len(c.inflight) == cap(c.inflight) {
		c.retireEarliest()
	}
	issued := start
	if rec.Kind == source.IOWrite {
		start = e.throttle(start)
	}
	if e.step != nil {
		e.step.before(i, rec, start)
	}
	c.tap.sync()
	e.flTap.sync()
	e.meter.reset()
	err := e.do(c, rec)
	ks := &e.kinds[rec.Kind]
	if err != nil {
		ks.noteError(err)
	}
	cpuNS, lruLook, lruHits := e.charge(c, rec, start)
	cpuDone := start + cpuNS
	done := e.serve(rec, cpuDone)
	c.free = cpuDone
	c.busyNS += cpuNS
	c.inflight = append(c.inflight, done)
	c.ops++
	e.end = max(e.end, done, e.flFree, e.clk.diskFree)
	e.account(ks, rec, lruLook, lruHits, done-issued, done)
	if e.step != nil {
		e.step.after(i, rec, issued, cpuNS, done, err)
		if e.step.err != nil {
			return e.step.err
		}
	}
	if e.o.Check {
		return e.mr.m.Check()
	}
	return nil
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

// charge prices the operation rec just run on c, from time start: its
// CPU's events ev and the requests issued synchronously go to the CPU,
// whose time it returns with the bh LRU lookups and hits among them; the
// flusher's events and a write's asynchronous write requests go to the
// flusher, whose clock it advances. The events are those since exec synced
// the two CPUs' taps.
func (e *engine) charge(c *cpuState, rec source.IO, start float64) (cpuNS float64, lruLook, lruHits uint64) {
	p := e.o.Profile
	reqNS := p.NS[timing.ParamRequest]
	var syncReqs, asyncReqs float64
	for _, r := range e.meter.reqs {
		if rec.Kind == source.IOWrite && r.op == blk.OpWrite {
			asyncReqs++
		} else {
			syncReqs += float64(r.count())
		}
	}
	cpuNS, lruLook, lruHits = c.tap.take(p)
	cpuNS += syncReqs * reqNS
	flNS, _, _ := e.flTap.take(p)
	flNS += asyncReqs * reqNS
	c.requests += syncReqs
	e.flReqs += asyncReqs
	if flNS > 0 || asyncReqs > 0 {
		e.flFree = max(e.flFree, start) + flNS
		e.flBusy += flNS
	}
	return cpuNS, lruLook, lruHits
}

// serve puts the requests of operation rec on the disk and returns when
// rec completes. The disk serves requests first come, first served: the
// op's own once its CPU work is done (cpuDone), the flusher's (a write's
// asynchronous writes, queued as writeback under way) once the flusher's
// is. A sync or flush also waits for the writeback under way.
func (e *engine) serve(rec source.IO, cpuDone float64) float64 {
	done := cpuDone
	for _, r := range e.meter.reqs {
		issue := cpuDone
		async := rec.Kind == source.IOWrite && r.op == blk.OpWrite
		if async {
			issue = e.flFree
		}
		fin := e.clk.serve(issue, r.svc)
		if e.step != nil {
			e.step.noteRequest(fin)
		}
		if async {
			pages := (r.bytes + 4095) / 4096
			e.wb = append(e.wb, wbEntry{fin, pages})
			e.wbPages += pages
		} else {
			done = max(done, fin)
		}
	}
	if rec.Kind == source.IOFsync || rec.Kind == source.IOFdatasync || rec.Kind == source.IOFlush {
		done = max(done, e.clk.diskFree) // waits for writeback under way
	}
	return done
}

// account adds operation rec, of latency lat and done at done, to its
// kind's statistics ks (with the bh LRU lookups and hits its CPU counted) and
// the run's timeline and bytes moved (a read's or write's length).
func (e *engine) account(ks *kindStats, rec source.IO, lruLook, lruHits uint64, lat, done float64) {
	ks.hist.add(lat)
	ks.bytes += rec.Length
	ks.bios += uint64(e.meter.bios)
	for _, r := range e.meter.reqs {
		ks.requests += r.count()
	}
	ks.lruLook += lruLook
	ks.lruHits += lruHits
	moved := uint64(0)
	if rec.Kind == source.IORead || rec.Kind == source.IOWrite {
		moved = rec.Length
	}
	e.tl.add(done, moved)
	e.bytes += moved
}

// throttle models balance_dirty_pages in simulated time: a write that
// finds more dirty folios and pages under writeback than the dirty limit
// waits until enough of the writeback completes (the model's page cache
// cleans pages at once when it writes them back; the disk takes its
// time), so that writers go at the pace of the disk. It returns when the write may start. O(requests
// completed) amortised.
func (e *engine) throttle(start float64) float64 {
	dirty := uint64(e.mr.dev.NrDirty())
	for e.wbHead < len(e.wb) {
		w := e.wb[e.wbHead]
		if w.done > start && dirty+e.wbPages <= e.wbLimit {
			break
		}
		start = max(start, w.done)
		e.wbPages -= w.pages
		e.wbHead++
	}
	if e.wbHead > 1024 && e.wbHead*2 > len(e.wb) {
		e.wb = append(e.wb[:0], e.wb[e.wbHead:]...)
		e.wbHead = 0
	}
	return start
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
// thread on those CPUs, not one of its own), all CPUs together, and the disk
// with its busy time.
func (e *engine) loads() []timing.Load {
	var cpus []timing.Load
	for i := range e.cpus {
		c := &e.cpus[i]
		l := timing.CPULoad(fmt.Sprintf("cpu%d", i), timing.PerOp(c.cpu.Events().Sub(c.start), 1, 0))
		l.Q[timing.ParamRequest] = c.requests
		cpus = append(cpus, l)
	}
	fl := timing.CPULoad(fmt.Sprintf("cpu%d (flusher)", len(e.cpus)), timing.PerOp(e.flusher.Events().Sub(e.flStart), 1, 0))
	fl.Q[timing.ParamRequest] = e.flReqs
	cpus = append(cpus, fl)
	servers := len(cpus)
	cpus = append(cpus, timing.CPULoad("kswapd0", timing.PerOp(e.kswapd.Events().Sub(e.ksStart), 1, 0)))
	loads := append(cpus, timing.AllCPUs(servers, cpus...))
	return append(loads, timing.Load{Name: "disk (" + e.o.Disk.Name + ")", FixedNS: e.clk.diskBusy, Servers: 1})
}

// finite is v, or 0 when v is not a finite number (a rate over no time).
func finite(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}
