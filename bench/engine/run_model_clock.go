package engine

import (
	"math"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// LoopDisk is the model of a loop device over a file on tmpfs, the host
// runner's device: each request costs the loop worker's round trip and a
// copy of its bytes, one request at a time. The figures are inputs
// measured on the host kernel (Linux 6.18, x86-64 VM) with dd through a
// private loop device on tmpfs at queue depth 1: 4 KiB O_DIRECT writes took
// 95 µs each (16,384 in 1.55 s), 64 KiB ones 100 µs, 1 MiB ones 450 µs
// (64 MiB in 29 ms): about 93 µs a request and 2.9 GB/s (1 MiB reads: 64
// MiB in 23 ms). No published cell comes from them.
func LoopDisk() blk.SSD { return blk.SSD{MBps: 2900, LatencyNS: 93e3} }

// LoopDiskModel is the loop device a measurement found (host.MeasureLoopDisk,
// recorded beside a timed corpus as scenario.LoopDiskFile): each direction's
// latency and rate, reads apart from writes and flushes. The figures are
// inputs measured on the host in the same sitting as the kernel's times.
func LoopDiskModel(l *scenario.LoopDisk) blk.Model {
	return blk.ReadWrite{
		Read:  blk.SSD{MBps: l.Read.MBps(), LatencyNS: l.Read.LatencyNS()},
		Write: blk.SSD{MBps: l.Write.MBps(), LatencyNS: l.Write.LatencyNS()},
	}
}

// modelClock is a timed RunModel's clock with what it needs to place each
// call: the queue's steps under way, the profile, the task's events since
// the call began, the call's placement so far, and, with the device's bdi
// dirty limits, the flusher and the task's dirty throttling.
type modelClock struct {
	clock
	meter stepMeter
	p     *timing.Profile
	tap   eventTap
	// sys is the call under way's system-call entry and exit
	// (timing.ParamSyscall), 0 for work that is no system call, and once
	// its first segment is placed.
	sys  float64
	call callTime
	// fl is the flusher, nil without dirty limits; task the writing
	// task's throttling, dirtied the device's pages dirtied when the task
	// last looked (the task is the device's only writer: what it dirtied
	// after its last look in a call, as the iomap path looks before it
	// dirties a folio, counts at its next look).
	fl      *flusher
	task    bufcache.DirtyTask
	dirtied int64
}

// modelDirtyable is the dirtyable memory of RunModel's machine, 16 GiB in
// pages: a host's of this project's size (the recordings' VM has 24 GiB),
// whose dirty thresholds — gigabytes — a scenario's I/O never reaches, so
// that only the bdi's own limits (max_bytes with strict_limit) act.
const modelDirtyable = 16 << 30 / 4096

// startClock times the run: it puts the step meter beside the counting
// tracer, the device's throttle rules on the clock, and with dirty limits
// the flusher and the task's dirty throttling.
func (r *modelRun) startClock(p *timing.Profile, rules scenario.Rules) error {
	t := &modelClock{p: p, tap: newEventTap(r.cpu)}
	t.ended, t.bus.p = r.dev.WrittenPages, p
	if tr := throttleRules(rules); tr.Any() {
		thr, err := blk.NewThrottle(tr, blk.DefaultHZ)
		if err != nil {
			return err
		}
		t.thr, t.queued = thr, true
		r.queue.SetThrottle(thr, r.submitNow)
	}
	if dirtyLimited(rules) {
		thr, err := bufcache.NewDirtyThrottle(bufcache.DirtyLimits{Dirtyable: modelDirtyable,
			MaxBytes: rules.MaxBytes, StrictLimit: rules.StrictLimit, HZ: blk.DefaultHZ})
		if err != nil {
			return err
		}
		t.fl = newFlusher(thr, r.dev, r.m.CPU(1), &t.clock, &t.meter, p)
		t.task = thr.NewTask()
	}
	r.queue.SetTracer(teeTracer{blockTracer{r.rec}, &t.meter})
	r.timed = t
	return nil
}

// dirtyLimited reports whether rules set the bdi's dirty limits, which
// need the flusher and the clock.
func dirtyLimited(r scenario.Rules) bool { return r.MaxBytes != 0 || r.StrictLimit }

// throttleRules are a device's throttle rules. The scenario bounds them
// below; an iops rule past UINT_MAX is that, as the kernel stores it.
func throttleRules(r scenario.Rules) blk.ThrottleRules {
	iops := func(v int64) uint32 { return uint32(min(v, math.MaxUint32)) }
	return blk.ThrottleRules{ReadBPS: uint64(r.ReadBPS), WriteBPS: uint64(r.WriteBPS),
		ReadIOPS: iops(r.ReadIOPS), WriteIOPS: iops(r.WriteIOPS)}
}

// beginCall marks the start of a timed run's next piece of the task's
// work: one system call when syscall, or work the scenario does without
// one (the host runner's wait for an idle device, a change to the backing
// store); wait says it waits for its writes, rd is the sectors a read
// reads. A system call pays its entry and exit (timing.ParamSyscall),
// which the host's wall clock around the call holds.
func (r *modelRun) beginCall(syscall, wait bool, rd span) {
	t := r.timed
	if t == nil {
		return
	}
	t.tap.sync()
	t.meter.reset()
	t.sys = 0
	if syscall {
		t.sys = t.p.NS[timing.ParamSyscall]
	}
	t.call = callTime{start: r.now, wait: wait, rd: rd, done: r.now}
	if t.fl != nil {
		t.fl.runUntil(r.now)
	}
	t.forget(r.now)
}

// cpuSoFar is the task's CPU time in the call's segment under way: its
// system call's entry and exit (in its first segment), its events priced,
// and the block layer's CPU cost of the requests and bios it has
// submitted (blockNS), stretched by the memory bus's load (memBus).
func (t *modelClock) cpuSoFar() float64 {
	return t.bus.stretch(t.call.at(), t.demandSoFar(), streams{copied: t.tap.copied()})
}

// demandSoFar is cpuSoFar on an idle memory bus: the work's own demand.
func (t *modelClock) demandSoFar() float64 {
	return t.sys + t.tap.peek(t.p) + blockNS(t.p, t.meter.issued, t.meter.queued)
}

// submitNow is the simulated time at which a bio is submitted: during a
// flusher pass, the pass's start and its CPU work so far; otherwise where
// the call under way has got to and its CPU work since (cpuSoFar).
func (r *modelRun) submitNow() float64 {
	t := r.timed
	if t.fl != nil && t.fl.passing {
		return t.fl.submitNow()
	}
	return t.call.at() + t.cpuSoFar()
}

// placeSegment places the call's work since its last segment on the clock.
func (t *modelClock) placeSegment() {
	ns := t.bus.cpu(t.call.at(), t.demandSoFar(), streams{copied: t.tap.copied()})
	t.tap.sync()
	t.segment(&t.call, t.meter.steps, ns)
	t.sys = 0
	t.meter.reset()
}

// BalanceDirtyPages implements bufcache.DirtyBalancer for a run with dirty
// limits: the task's pages dirtied since it last looked are weighed at
// the call's moment and it sleeps as balance_dirty_pages says
// (flusher.balance), its work so far placed first.
func (r *modelRun) BalanceDirtyPages(_ *bufcache.CPU, d *bufcache.BlockDevice) {
	t := r.timed
	n := d.DirtiedPages() - t.dirtied
	t.dirtied = d.DirtiedPages()
	pages, run := t.fl.thr.Dirtied(&t.task, n)
	if !run {
		return
	}
	now := t.call.at() + t.cpuSoFar()
	t.call.slept += t.fl.balance(&t.task, pages, now, func(at float64) { r.settle(at) })
}

// settle brings the clock to t inside a call: the call's work so far
// placed, the flusher's passes due by t made, and, under throttle rules,
// the rounds whose ticks have come by t dispatched, as kthrotld's timer
// dispatches them while the task sleeps, their requests placed as the
// worker's (no CPU of the task's, nothing it waits for).
func (r *modelRun) settle(t float64) {
	k := r.timed
	k.placeSegment()
	k.fl.runUntil(t)
	if k.queued {
		mark := k.meter.mark()
		r.queue.ReleaseThrottledUntil(t)
		k.place(k.meter.steps[mark.steps:], t, 0, false, span{})
		k.meter.restore(mark)
	}
}

// drain follows an operation of a timed run as the host runner's wait for
// an idle device does, outside every time: the flusher ends its
// background work, the round the last bios wait in goes out
// (blk.Queue.ReleaseThrottled), and the run's time moves past their
// requests.
func (r *modelRun) drain() {
	t := r.timed
	if t == nil || !t.queued && t.fl == nil {
		return
	}
	r.beginCall(false, true, span{})
	if t.fl != nil {
		t.fl.finish()
	}
	if t.queued {
		r.queue.ReleaseThrottled()
	}
	r.endCall()
}

// endCall places the rest of the call begun last on the clock and moves
// the task's time to its end (callTime.end).
func (r *modelRun) endCall() {
	t := r.timed
	if t == nil {
		return
	}
	t.placeSegment()
	r.now = t.end(&t.call)
}
