package engine

import (
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// The flusher and the writers' pauses on the clock.
//
// A buffered write only dirties the page cache; the data reaches the disk
// by background writeback, which the flusher thread (a kworker running
// wb_workfn) does on its own CPU, and the writers are held back
// (balance_dirty_pages) so that the dirty pages do not outrun the disk.
// Both are timing mechanisms, so they live on the clock:
//
//   - the model's write paths call the machine's balance_dirty_pages
//     (bufcache.Config.Balancer) after each folio they dirty; the clock
//     then knows the writer's moment (its call's start, its CPU work so
//     far, its sleeps so far) and the device's counts at that moment —
//     its dirty pages, and under writeback both the folios the model has
//     not yet sent and the write requests the clock has not yet completed
//     (clock.writesAt);
//   - bufcache.DirtyThrottle, 6.18's control law, answers whether the
//     flusher must start and how long the writer sleeps; the sleep is
//     time on the writer's call, during which the flusher works and the
//     disk completes requests;
//   - the flusher runs passes of background writeback
//     (bufcache.BlockDevice.WriteBackground of ChunkPages pages) one after
//     another on its CPU while the device is over its background
//     threshold (OverBackground), each pass placed on the clock when the
//     simulated time reaches it, its bios leaving over its CPU work as a
//     task's do; then it sleeps until a writer wakes it.
//
// What the flusher does not model: the periodic kupdate writeback of data
// dirty for 30 s (dirty_expire_centisecs; workloads shorter than that do
// not meet it), writeback of several devices, and a pass that waits for
// folios under writeback (a pass that writes nothing ends the flusher's
// work).

// flusher is the flusher thread of one device on the clock, with the
// device's dirty throttling.
type flusher struct {
	thr   *bufcache.DirtyThrottle
	dev   *bufcache.BlockDevice
	cpu   *bufcache.CPU
	tap   eventTap
	clk   *clock
	meter *stepMeter
	p     *timing.Profile
	// active says the flusher has background work; next is when its next
	// pass starts, free when its CPU is next free.
	active     bool
	next, free float64
	// busy is its CPU time, reqs the requests it issued and bios its
	// bios' passes through the queue (stepMeter.queued); md the md
	// layer's work charged to it (mdTap).
	busy, reqs, bios float64
	md               timing.Quantities
	// passing says a pass is under way, from passAt, the meter at
	// passMark when it began: what submitNow tells a queue whose throttle
	// stage asks when a bio is submitted.
	passing  bool
	passAt   float64
	passMark meterMark
	// spill holds the writes takeWrites takes out of a write's steps.
	spill []blockStep
}

// newFlusher returns the flusher of dev on cpu, placing its passes on clk
// at p's prices; its passes' block steps reach meter (the queue's step
// tracer), which it takes back out of it.
func newFlusher(thr *bufcache.DirtyThrottle, dev *bufcache.BlockDevice, cpu *bufcache.CPU, clk *clock, meter *stepMeter, p *timing.Profile) *flusher {
	return &flusher{thr: thr, dev: dev, cpu: cpu, tap: newEventTap(cpu), clk: clk, meter: meter, p: p}
}

// state is the device's counts at t (bufcache.DirtyState): its dirty
// pages, under writeback the folios the model has not sent and the write
// requests still in flight on the clock, and written the pages of those
// completed. O(log requests in flight).
func (f *flusher) state(t float64) bufcache.DirtyState {
	inflight, written := f.clk.writesAt(t)
	return bufcache.DirtyState{Dirty: f.dev.DirtyPages(), Writeback: f.dev.WritebackPages() + inflight,
		Dirtied: f.dev.DirtiedPages(), Written: written}
}

// runUntil makes the flusher's passes that start by t, in order.
func (f *flusher) runUntil(t float64) {
	for f.active && f.next <= t {
		f.pass(f.next)
	}
}

// wake starts background writeback at t (wb_start_background_writeback)
// unless the flusher is already at it: its first pass starts once its CPU
// is free.
func (f *flusher) wake(t float64) {
	if f.active {
		return
	}
	f.active, f.next = true, max(t, f.free)
	f.thr.WritebackStarts(f.next, f.state(f.next))
}

// pass is one turn of the flusher's background work at at (wb_writeback's
// loop): if the device is over its background threshold, ChunkPages
// pages written back on the flusher's CPU, its events priced with its
// requests and bios (blockNS) and placed on the clock from at, and the
// flusher goes on from the end of its CPU work; otherwise, or when a pass
// wrote nothing, its work ends.
func (f *flusher) pass(at float64) {
	if !f.thr.OverBackground(f.state(at)) {
		f.active = false
		return
	}
	mark := f.meter.mark()
	f.tap.sync()
	f.passing, f.passAt, f.passMark = true, at, mark
	pages := f.dev.WriteBackground(f.cpu, int(f.thr.ChunkPages()))
	f.passing = false
	reqs, bios := f.meter.issued-mark.issued, f.meter.queued-mark.queued
	copied := f.tap.copied()
	ns, _, _ := f.tap.take(f.p)
	if f.clk.md != nil {
		var mdNS float64
		mdNS, reqs, bios = f.clk.md.charge(f.p, &f.md, reqs, bios)
		ns += mdNS
	}
	ns = f.clk.bus.cpu(at, ns+blockNS(f.p, reqs, bios), streams{copied: copied})
	f.clk.place(f.meter.steps[mark.steps:], at, ns, false, span{})
	f.meter.restore(mark)
	f.free = at + ns
	f.busy += ns
	f.reqs += float64(reqs)
	f.bios += float64(bios)
	f.thr.WritebackProgress(f.free, f.state(f.free))
	if pages == 0 {
		f.active = false
		return
	}
	f.next = f.free
}

// submitNow is when the pass under way submits a bio: its start and its
// CPU work so far, its events priced and its requests and bios.
func (f *flusher) submitNow() float64 {
	return f.passAt + f.clk.bus.stretch(f.passAt, f.tap.peek(f.p)+blockNS(f.p, f.meter.issued-f.passMark.issued, f.meter.queued-f.passMark.queued), streams{copied: f.tap.copied()})
}

// balance is balance_dirty_pages for task at time now of its call, once
// balance_dirty_pages_ratelimited found its pages due (DirtyThrottle.Dirtied,
// which the caller asks first, and which gave pages): it weighs the
// device's counts, wakes the flusher, and sleeps as the control law says,
// looking again after a sleep at the limit. settle(t) must bring the clock
// to t before each look: place the task's work so far and make the
// flusher's passes due by t (flusher.runUntil). It returns the time the
// task slept.
func (f *flusher) balance(task *bufcache.DirtyTask, pages int64, now float64, settle func(t float64)) (slept float64) {
	var last bufcache.DirtyState
	for looked := false; ; looked = true {
		settle(now)
		s := f.state(now)
		if looked && s == last && !f.active {
			// Nothing moved while the task slept and nothing will: what is
			// dirty cannot be written (the model's passes found nothing to
			// take). The kernel's task would sleep on; the model's goes on.
			return slept
		}
		last = s
		pause, wake, again := f.thr.Balance(task, pages, now, s)
		if wake && !f.active {
			f.wake(now)
			settle(now)
		}
		if pause > 0 {
			slept += pause
			now += pause
			settle(now)
		}
		if !again {
			return slept
		}
	}
}

// takeWrites takes the writes out of a buffered write's block steps,
// placed at at: a buffered write submits none of its own, so those the
// model made during it are writeback that reclaim started on meeting
// dirty folios (bufcache's reclaimWriteback: the flusher's work, which
// the kernel's reclaim wakes it for). They go on the clock as the
// flusher's, their requests and bios counted as its. It returns the rest,
// in order, in steps' array, and the requests and bio passes among them
// (stepMeter). O(steps).
func (f *flusher) takeWrites(steps []blockStep, at float64) (rest []blockStep, reqs, bios int) {
	f.spill, rest = f.spill[:0], steps[:0]
	n, nb, flushers := 0, 0, false
	for _, st := range steps {
		if st.kind != blk.TraceSplit { // a split part goes with its bio
			flushers = st.op == blk.OpWrite
		}
		queued := st.kind == blk.TraceBioQueue || st.kind == blk.TraceSplit
		switch {
		case flushers:
			f.spill = append(f.spill, st)
			if st.kind == blk.TraceRqIssue {
				n++
			} else if queued {
				nb += st.bios()
			}
		case st.kind == blk.TraceRqIssue:
			reqs++
			rest = append(rest, st)
		default:
			if queued {
				bios += st.bios()
			}
			rest = append(rest, st)
		}
	}
	if n > 0 || len(f.spill) > 0 {
		f.clk.place(f.spill, at, 0, false, span{})
		f.reqs += float64(n)
		f.bios += float64(nb)
	}
	return rest, reqs, bios
}

// finish lets the flusher end its background work: every pass it still
// has, whenever they come.
func (f *flusher) finish() {
	for f.active {
		f.pass(f.next)
	}
}
