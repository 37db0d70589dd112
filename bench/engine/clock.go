package engine

import (
	"math"
	"sort"

	"github.com/bhsim/bhsim/bench/timing"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// The model's simulated time is one discrete-event clock. Its parts, from
// the task down, are the ones a block write or read crosses in the kernel:
//
//   - a CPU runs a call's work: its system call's entry and exit, its
//     events priced by the hardware profile (timing.Profile.SimNS) and the
//     block layer's costs of the requests and bios it submitted (blockNS),
//     from the moment the CPU is free; a bio blk-throttle holds is charged
//     to its submitter too, as its round's requests are, where the kernel's
//     kthrotld worker makes that pass (time-neutral under the rule, which
//     paces the bio either way);
//   - the bios the call submits leave the CPU spread evenly over that work
//     (the model's call runs to its end before the clock sees its bios; a
//     kernel call interleaves its work and its submissions);
//   - under the device's throttle rules each bio then waits in blk-throttle
//     (blk.Throttle) until its rule lets it go, and a part the request
//     layer split off follows the part before it; a scenario's queue does
//     this as each bio is submitted, at the time its CPU work so far gives
//     (blk.Queue.SetThrottle), so that the bios one timer tick releases
//     form requests together, as the kthrotld worker's plug forms them;
//   - a request leaves for its disk when the last of its bio parts has,
//     and each disk serves its requests one at a time in that order (first
//     come, first served), each for the time its model prices; an md
//     array's members are disks of their own (array.go);
//   - a flush follows the data writes before it: it is issued when they
//     have completed, as the fsync path waits for writeback before it sends
//     the cache flush;
//   - a call that waits for its I/O — a read, a sync, the last close —
//     completes when its last request does; a buffered write's writeback
//     is asynchronous and does not hold the call;
//   - the CPU work of each call and flusher pass is stretched by the memory
//     bus's load so far, the CPUs' copies and the requests' DMA, under a
//     profile with a memory-stall share (memBus; timing.Profile.Contended
//     is its closed form for a run's loads);
//   - the clock keeps the write requests in flight with their pages, so
//     that writeback is under way until its requests complete: what
//     balance_dirty_pages weighs (NR_WRITEBACK) and measures (the pages
//     written) at a moment (flusher, writeback.go: the flusher's
//     background writeback and the writers' pauses on this clock).
//
// Time is in float64 nanoseconds from the run's start. The clock keeps no
// per-request state beyond the bio parts not yet in a request, so a long
// run costs no memory.

// blockStep is one block-layer event of a call, in the order it happened.
type blockStep struct {
	kind blk.TraceKind // TraceBioQueue, TraceSplit or TraceRqIssue
	// disk is the queue it happened on: 0, or an array's member.
	disk  uint8
	op    blk.Op
	flags blk.BioFlags
	// sector is a bio's or request's first sector on its disk, bytes its
	// size; at is the device's sector of its data, which a read's sectors
	// are matched against: sector itself on one disk, the array's sector
	// for a member's (md.Array.ArraySector), noData for a member sector
	// that holds none (RAID6 parity).
	sector uint64
	bytes  uint64
	at     uint64
	// reqs is how many requests a TraceRqIssue step stands for: 0 is one;
	// a discard's requests, which reach no queue, are one step of many.
	reqs uint64
	// parts is a request's bio parts (TraceRqIssue), svc its service time,
	// ready when its last part left the queue's throttle stage (queued
	// clocks only).
	parts int
	svc   float64
	ready float64
	// run is how many bios of one size a TraceBioQueue step stands for
	// when the meter runs them together (stepMeter.runs): 0 is one. Its
	// sector and at are then its first bio's. period, on the first of
	// period steps (more than one), says their bios came in turn: the
	// first's, the second's, ..., the first's again, as many rounds as the
	// first has bios, the later ones' last round perhaps cut short.
	run    uint32
	period uint8
}

// bios is how many bios a TraceBioQueue step stands for. O(1).
func (s *blockStep) bios() int { return max(int(s.run), 1) }

// takes reports whether a bio of op, flags and bytes, on disk, can join
// s: a bio step of the same disk, direction, flags and size. O(1).
func (s *blockStep) takes(disk uint8, op blk.Op, flags blk.BioFlags, bytes uint64) bool {
	return s.kind == blk.TraceBioQueue && s.disk == disk && s.op == op && s.flags == flags && s.bytes == bytes
}

// maxPeriod is the most steps whose bios the meter runs together in turn:
// the members an array's bio goes to one after another (RAID10's copies,
// a RAID6 stripe's data and parity).
const maxPeriod = 8

// stepMeter records the block steps of the call under way: a blk.Tracer;
// issued counts its TraceRqIssue steps and queued its TraceBioQueue and
// TraceSplit steps (a split-off part passes the queue again), the
// requests and bio passes whose CPU cost the block layer adds to the work
// of the CPU that submits them (blockNS). It allocates nothing once its
// slice has grown to a call's steps.
//
// With runs, consecutive bios of one disk, direction, flags and size are
// one step (blockStep.run), and bios that come in turn to up to maxPeriod
// disks (an array's members) one step a disk (blockStep.period): a
// writeback pass at 512-byte blocks submits a bio a buffer, and the clock
// places the bios of a step one by one, in their order, all the same, so
// only their records are saved. runs suits a clock that passes no bio
// through a throttle (each would leave at its own time) and no stepper
// (which lists each bio).
type stepMeter struct {
	steps          []blockStep
	issued, queued int
	runs           bool
	// sealed is how many steps no bio may join: those before the last
	// mark, which restore may cut back to, and those of a turn that has
	// ended. A turn under way is the period steps from turn; the next bio
	// of it is the step at turn+next's.
	sealed             int
	turn, period, next int
	// disk is the queue whose events come in and arr its array
	// (memberTracer), 0 and nil for a single disk.
	disk uint8
	arr  *md.Array
}

// noData is blockStep.at for a member sector that holds no data of the
// array: it overlaps no read.
const noData = math.MaxUint64 >> 1

// meterMark is where a stepMeter was: its steps, requests and bios, so
// that the steps of a flusher pass or a throttle release made inside a
// call can be taken back out of it (restore) and priced on their own.
type meterMark struct{ steps, issued, queued int }

// mark returns where the meter is; no later bio joins a step before it.
func (m *stepMeter) mark() meterMark {
	m.sealed, m.period = len(m.steps), 0
	return meterMark{len(m.steps), m.issued, m.queued}
}

// restore drops what the meter recorded since k.
func (m *stepMeter) restore(k meterMark) {
	m.steps, m.issued, m.queued, m.sealed, m.period = m.steps[:k.steps], k.issued, k.queued, k.steps, 0
}

// join adds a bio of op, flags and bytes to the steps when it goes on the
// turn under way or starts one with the steps before it, and reports
// whether it did; else it ends the turn under way. O(maxPeriod).
func (m *stepMeter) join(op blk.Op, flags blk.BioFlags, bytes uint64) bool {
	if m.period > 0 {
		if s := &m.steps[m.turn+m.next]; s.takes(m.disk, op, flags, bytes) {
			s.run = uint32(s.bios() + 1)
			m.next = (m.next + 1) % m.period
			return true
		}
		m.endTurn()
	}
	n := len(m.steps)
	for p := 1; p <= maxPeriod && n-p >= m.sealed; p++ {
		s := &m.steps[n-p]
		if s.kind != blk.TraceBioQueue || s.bios() > 1 || s.op != op || s.bytes == 0 {
			return false // a longer turn would hold this step too
		}
		if s.takes(m.disk, op, flags, bytes) {
			s.run, s.period = 2, uint8(p)
			m.turn, m.period, m.next = n-p, p, 1%p
			return true
		}
	}
	return false
}

// blockNS is the CPU time under p that the block layer adds for reqs
// requests issued (timing.ParamRequest: the request's allocation, the
// driver's command, its completion) and bios passes of a bio through
// blk_mq_submit_bio (timing.ParamMQBio: its plug merge attempt or
// request, and accounting), charged to the CPU that submitted them, so
// that every run of the model prices a bio alike.
func blockNS(p *timing.Profile, reqs, bios int) float64 {
	return float64(reqs)*p.NS[timing.ParamRequest] + float64(bios)*p.NS[timing.ParamMQBio]
}

// meterKinds are the tracepoints a stepMeter reads (Trace): on a queue
// that reports only these (blk.Queue.SetTracerKinds), the others build no
// event: a bio of a writeback pass hits five to seven tracepoints (its
// queueing, its request or merge, the plug's, the request's insert, issue
// and completion), of which the meter reads two (block_split only when a
// bio is split).
var meterKinds = blk.TraceKindsOf(blk.TraceBioQueue, blk.TraceSplit, blk.TraceRqIssue)

// Trace implements blk.Tracer; it reads the events of meterKinds, those
// of bios through TraceBio.
func (m *stepMeter) Trace(e blk.TraceEvent) {
	switch e.Kind {
	case blk.TraceBioQueue, blk.TraceSplit:
		m.TraceBio(e.Kind, e.Op, e.Flags, e.Sector, e.Bytes)
	case blk.TraceRqIssue:
		m.issued++
		m.endTurn()
		m.steps = append(m.steps, blockStep{kind: e.Kind, disk: m.disk, op: e.Op, sector: e.Sector, bytes: e.Bytes, at: m.at(e.Sector), parts: e.Count, svc: e.ServiceNS, ready: e.ReadyNS})
	}
}

// TraceBio implements blk.BioTracer: a bio queued (block_bio_queue) or a
// split's part (block_split, which passes blk_mq_submit_bio again) is a
// step, or joins one (join); the other bio tracepoints are not the
// meter's.
func (m *stepMeter) TraceBio(k blk.TraceKind, op blk.Op, flags blk.BioFlags, sector, bytes uint64) {
	if k != blk.TraceBioQueue && k != blk.TraceSplit {
		return
	}
	m.queued++
	if k == blk.TraceBioQueue && m.runs && bytes > 0 && m.join(op, flags, bytes) {
		return
	}
	m.endTurn()
	m.steps = append(m.steps, blockStep{kind: k, disk: m.disk, op: op, flags: flags, sector: sector, bytes: bytes, at: m.at(sector)})
}

// endTurn ends the turn under way, if any: no later bio joins its steps.
func (m *stepMeter) endTurn() {
	if m.period > 0 {
		m.sealed, m.period = m.turn+m.period, 0
	}
}

// at is the device's sector of the data at sector of the meter's disk:
// sector itself on one disk, the array's sector on a member (noData where
// the member's sector holds none). O(1).
func (m *stepMeter) at(sector uint64) uint64 {
	if m.arr == nil {
		return sector
	}
	at, ok := m.arr.ArraySector(int(m.disk), sector)
	if !ok {
		return noData
	}
	return at
}

// reset starts a new call.
func (m *stepMeter) reset() {
	m.steps, m.issued, m.queued, m.sealed, m.period = m.steps[:0], 0, 0, 0, 0
}

// teeTracer sends every event to both tracers.
type teeTracer struct{ a, b blk.Tracer }

// Trace implements blk.Tracer.
func (t teeTracer) Trace(e blk.TraceEvent) {
	t.a.Trace(e)
	t.b.Trace(e)
}

// clock places calls on simulated time: the disks' queues and the bio parts
// on their way to requests.
type clock struct {
	// thr is the device's blk-throttle, nil without rules. With queued,
	// the queue's throttle stage (blk.Queue.SetThrottle) passes the data
	// bios through it as they are submitted and each request comes with
	// its ready time; the clock passes only the empty flushes, at the time
	// the writes before them completed.
	thr    *blk.Throttle
	queued bool
	// disks are the disks, by the index of the queue their requests
	// come from (blockStep.disk), each with the submission times of its
	// bio parts not yet in a request; grown as requests reach them.
	disks []diskClock
	// reads are read requests in flight that no call waited for (async
	// readahead): a later read of their sectors waits for them.
	reads []inflightRead
	// writes are the write requests placed and not yet forgotten, in
	// completion order (insertWrite: a disk serves in order, but an
	// array's members complete out of each other's order); written is the
	// pages of those forgotten as complete, placed the pages of all.
	writes          fifo[inflightWrite]
	written, placed int64
	// ended, if set, is the device's pages whose writeback has ended in
	// the model (bufcache.BlockDevice.WrittenPages); endedSeen its value
	// at the last place. The pages a place's write requests carry are
	// those that ended since, spread over the requests by their sizes, so
	// that the clock counts a folio once, as WB_WRITTEN does, however
	// many requests its buffers went out in; without it a request carries
	// its bytes in pages.
	ended     func() int64
	endedSeen int64
	// finished, if set, is told each request's completion time (step
	// mode's requests in flight).
	finished func(done float64)
	// bus is the memory bus: the DMA of the requests placed, the CPUs'
	// copies, and the stretch its load gives a CPU's work (memBus).
	bus memBus
	// md is the array's tap (RunOptions.Array), nil for one disk: a
	// placement whose RAID6 writes raid5d handles (mdTap.charge) puts
	// raid5d's work on the clock, and its bios leave over that work.
	md *mdTap
}

// diskClock is one disk on the clock: when it is next free, its time
// serving, and the submission times of the bio parts its queue has not yet
// put in a request, in submission order.
type diskClock struct {
	free, busy float64
	parts      fifo[float64]
}

// disk returns disk d's clock, adding the disks up to it. O(1) once
// added.
func (c *clock) disk(d uint8) *diskClock {
	for int(d) >= len(c.disks) {
		c.disks = append(c.disks, diskClock{})
	}
	return &c.disks[d]
}

// diskFree is when every disk is next free: the end of the last request
// placed.
func (c *clock) diskFree() float64 {
	t := 0.0
	for i := range c.disks {
		t = max(t, c.disks[i].free)
	}
	return t
}

// diskBusy is the disks' time serving, summed.
func (c *clock) diskBusy() float64 {
	t := 0.0
	for i := range c.disks {
		t += c.disks[i].busy
	}
	return t
}

// inflightWrite is a write request's completion time, its pages, and the
// pages of every write request that completes by it.
type inflightWrite struct {
	done       float64
	pages, cum int64
}

// insertWrite puts a write request of pages completing at done among the
// writes in flight, in completion order, and brings the sums of the
// requests after it up to date. O(1) for a request that completes last (one
// disk), O(requests it overtakes) otherwise.
func (c *clock) insertWrite(done float64, pages int64) {
	c.writes.push(inflightWrite{done: done, pages: pages})
	w := c.writes.live()
	i := len(w) - 1
	for ; i > 0 && w[i-1].done > done; i-- {
		w[i], w[i-1] = w[i-1], w[i]
	}
	cum := c.written
	if i > 0 {
		cum = w[i-1].cum
	}
	for ; i < len(w); i++ {
		cum += w[i].pages
		w[i].cum = cum
	}
}

// pageBytes is the page size the clock counts a write request's pages in
// (4 KiB, the host's and the threads' x86 page; a request of part of a
// page counts as a page).
const pageBytes = 4096

// inflightRead is a read request's sectors [lo, hi) and completion time.
type inflightRead struct {
	lo, hi uint64
	done   float64
}

// span is a call's range of sectors [lo, hi); the zero span is no range.
type span struct{ lo, hi uint64 }

// overlaps reports whether [lo, hi) meets s.
func (s span) overlaps(lo, hi uint64) bool { return lo < s.hi && s.lo < hi }

// callTime is a call under way on the clock, placed in segments: the
// work before each of its balance_dirty_pages looks goes on the clock
// before the flusher's passes that look lets run, as the disk sees them.
// wait says the call waits for its writes (a sync), rd is the sectors a
// read call reads; cpuNS, slept and done are its CPU time, its sleeps and
// when its I/O so far completes.
type callTime struct {
	start              float64
	wait               bool
	rd                 span
	cpuNS, slept, done float64
}

// at is where the call has got to: its start, its CPU work and its sleeps.
func (c *callTime) at() float64 { return c.start + c.cpuNS + c.slept }

// segment places the call's next segment — steps submitted over ns of CPU
// work from where the call has got to — and returns where it landed.
// O(steps + reads in flight).
func (k *clock) segment(c *callTime, steps []blockStep, ns float64) placed {
	p := k.place(steps, c.at(), ns, c.wait, c.rd)
	c.cpuNS += ns
	c.done = max(c.done, p.done)
	return p
}

// end is when the call completes: its CPU work and sleeps, the I/O it
// waits for, and for a sync the writeback under way. O(1).
func (k *clock) end(c *callTime) float64 {
	done := max(c.done, c.at())
	if c.wait {
		done = max(done, k.lastWrite())
	}
	return done
}

// placed is where a call landed on the clock.
type placed struct {
	// cpuDone is when its CPU work ended; done when the call completed
	// (its CPU work and the I/O it waits for); ioDone when its last
	// request completed (cpuDone when it made none).
	cpuDone, done, ioDone float64
}

// place puts a call on the clock: CPU work from start for cpuNS, during
// which it submitted steps; wait says whether the call waits for its
// writes. A read call (rd not zero: the sectors it reads) waits for the read
// requests of its sectors, whether it issued them or an earlier call's
// readahead did, and not for the readahead beyond them; any other call
// waits for every read it issued. O(steps + reads in flight).
func (c *clock) place(steps []blockStep, start, cpuNS float64, wait bool, rd span) placed {
	p := placed{cpuDone: start + cpuNS, done: start + cpuNS, ioDone: start + cpuNS}
	c.waitReads(&p, start, rd)
	bios := 0
	var raw int64 // the write requests' pages by their bytes
	for _, s := range steps {
		switch {
		case s.kind == blk.TraceBioQueue:
			bios += s.bios()
		case s.kind == blk.TraceRqIssue && s.op == blk.OpWrite && s.reqs == 0:
			raw += requestPages(s.bytes)
		}
	}
	pages := raw // the pages the writes carry: see ended
	if c.ended != nil && raw > 0 {
		now := c.ended()
		pages, c.endedSeen = now-c.endedSeen, now
	}
	var rawSoFar, carried int64
	lastSubmit, k := start, 0
	from, over := start, cpuNS // where the bios leave from, and over what
	if c.md != nil {
		if r5, ns, ok := c.md.take(&c.bus, start); ok {
			from, over = r5, ns
		}
	}
	bio := func(s *blockStep) { // the next bio of the call
		k++
		at := from + over*float64(k)/float64(bios)
		empty := s.bytes == 0 && s.flags&blk.FlagPreflush != 0
		switch {
		case empty:
			// sent once the writes before it are done; no request's
			// part: its flush request follows it
			lastSubmit = c.throttle(max(at, p.ioDone), s, false)
		case c.queued:
			lastSubmit = at
		default:
			lastSubmit = c.throttle(at, s, false)
			c.disk(s.disk).parts.push(lastSubmit)
		}
	}
	for i := 0; i < len(steps); i++ {
		s := &steps[i] // by pointer: a step copied whole stalls on store forwarding
		switch s.kind {
		case blk.TraceBioQueue:
			if s.period > 1 { // bios in turn: round by round
				turn := steps[i : i+int(s.period)]
				for r := range s.bios() {
					for j := range turn {
						if r < turn[j].bios() {
							bio(&turn[j])
						}
					}
				}
				i += len(turn) - 1
				continue
			}
			for range s.bios() {
				bio(s)
			}
		case blk.TraceSplit: // a part of the bio just submitted
			if !c.queued {
				lastSubmit = c.throttle(lastSubmit, s, true)
				c.disk(s.disk).parts.push(lastSubmit)
			}
		case blk.TraceRqIssue:
			issue := s.ready
			if !c.queued {
				issue = c.disk(s.disk).takeParts(s.parts, start)
			}
			if s.op == blk.OpFlush { // after the writes before it and its bio
				issue = max(issue, p.ioDone, lastSubmit)
			}
			fin := c.disk(s.disk).serve(issue, s.svc)
			if s.reqs == 0 { // reqs > 0 is a discard's step, which moves no data
				c.bus.dma(s.bytes, fin)
			}
			p.ioDone = max(p.ioDone, fin)
			if c.finished != nil {
				c.finished(fin)
			}
			if s.op == blk.OpWrite && s.reqs == 0 { // writeback, not a discard
				var n int64
				if raw > 0 {
					rawSoFar += requestPages(s.bytes)
					share := pages * rawSoFar / raw
					n, carried = share-carried, share
				}
				c.placed += n
				c.insertWrite(fin, n)
			}
			switch {
			case s.op == blk.OpRead && rd != span{} && !rd.overlaps(s.at, s.at+s.bytes>>blk.SectorShift):
				c.reads = append(c.reads, inflightRead{s.at, s.at + s.bytes>>blk.SectorShift, fin})
			case wait || s.op != blk.OpWrite:
				p.done = max(p.done, fin)
			}
		}
	}
	return p
}

// requestPages is a write request's pages by its bytes (a part of a page
// counts as a page).
func requestPages(bytes uint64) int64 { return int64((bytes + pageBytes - 1) / pageBytes) }

// throttle is when a bio (or, split, a further part of one) submitted at
// at leaves the throttle: at itself without rules. O(1) amortised.
func (c *clock) throttle(at float64, s *blockStep, split bool) float64 {
	if c.thr == nil {
		return at
	}
	return c.thr.Submit(at, s.op != blk.OpRead, s.bytes, split)
}

// waitReads drops the reads in flight that completed by start and makes a
// read of rd wait for those of its sectors still in flight. O(reads).
func (c *clock) waitReads(p *placed, start float64, rd span) {
	kept := c.reads[:0]
	for _, r := range c.reads {
		if r.done <= start {
			continue
		}
		if rd.overlaps(r.lo, r.hi) {
			p.done = max(p.done, r.done)
		}
		kept = append(kept, r)
	}
	c.reads = kept
}

// writesAt returns the pages of the write requests placed that are still
// in flight at t and the pages of all that have completed by then: what
// balance_dirty_pages counts as under writeback (beyond the folios the
// model has not yet sent) and as written. O(log requests in flight).
func (c *clock) writesAt(t float64) (inflight, written int64) {
	w := c.writes.live()
	i := sort.Search(len(w), func(i int) bool { return w[i].done > t })
	written = c.written
	if i > 0 {
		written = w[i-1].cum
	}
	return c.placed - written, written
}

// forget drops the write requests completed by t from the ones in flight
// (t must not decrease from call to call: no later query looks before it).
// Amortised O(1) per request.
func (c *clock) forget(t float64) {
	for !c.writes.empty() && c.writes.front().done <= t {
		c.written = c.writes.pop().cum
	}
}

// lastWrite is when the last write request placed completes (0: none in
// flight): what a sync waits for of the writeback under way. O(1).
func (c *clock) lastWrite() float64 {
	if c.writes.empty() {
		return 0
	}
	return c.writes.back().done
}

// serve puts a request issued at issue, needing svc of the disk, on the
// disk's queue and returns when it completes: first come, first served.
// O(1).
func (d *diskClock) serve(issue, svc float64) float64 {
	d.free = max(d.free, issue) + svc
	d.busy += svc
	return d.free
}

// takeParts removes the disk's next n bio parts and returns when the last
// of them was submitted (from, when there are none: a request of parts
// submitted before the clock's run). Amortised O(n).
func (c *diskClock) takeParts(n int, from float64) float64 {
	t := from
	for ; n > 0 && !c.parts.empty(); n-- {
		t = max(t, c.parts.pop())
	}
	return t
}
