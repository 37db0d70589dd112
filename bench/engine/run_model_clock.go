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
// call: the queue's steps under way, the profile, the task's events when
// the call began.
type modelClock struct {
	clock
	meter stepMeter
	p     *timing.Profile
	mark  bufcache.Counters
	// sys is the call under way's system-call entry and exit
	// (timing.ParamSyscall), 0 for work that is no system call.
	sys float64
}

// startClock times the run: it puts the step meter beside the counting
// tracer and the device's throttle rules on the clock.
func (r *modelRun) startClock(p *timing.Profile, rules scenario.Rules) error {
	t := &modelClock{p: p}
	if tr := throttleRules(rules); tr.Any() {
		thr, err := blk.NewThrottle(tr, blk.DefaultHZ)
		if err != nil {
			return err
		}
		t.thr, t.queued = thr, true
		r.queue.SetThrottle(thr, r.submitNow)
	}
	r.queue.SetTracer(teeTracer{blockTracer{r.rec}, &t.meter})
	r.timed = t
	return nil
}

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
// store). A system call pays its entry and exit (timing.ParamSyscall),
// which the host's wall clock around the call holds.
func (r *modelRun) beginCall(syscall bool) {
	if t := r.timed; t != nil {
		t.mark = r.cpu.Events()
		t.meter.reset()
		t.sys = 0
		if syscall {
			t.sys = t.p.NS[timing.ParamSyscall]
		}
	}
}

// cpuSoFar is the task's CPU time in the call under way: its system call's
// entry and exit, its events priced, and a request's CPU cost for each
// request it has issued.
func (t *modelClock) cpuSoFar(now bufcache.Counters) float64 {
	return t.sys + t.p.SimNS(now.Sub(t.mark), 0) + float64(t.meter.issued)*t.p.NS[timing.ParamRequest]
}

// submitNow is the simulated time at which the call under way submits a
// bio: when it began, and its CPU work so far (cpuSoFar).
func (r *modelRun) submitNow() float64 {
	return r.now + r.timed.cpuSoFar(r.cpu.Events())
}

// drainThrottle follows an operation of a timed run whose device has
// throttle rules: the host runner waits until the device is idle and the
// throttle holds nothing before the next operation, outside every time, so
// the round the operation's last bios wait in goes out now, on the clock
// (blk.Queue.ReleaseThrottled), and the run's time moves past its requests.
func (r *modelRun) drainThrottle() {
	if t := r.timed; t != nil && t.queued {
		r.beginCall(false)
		r.queue.ReleaseThrottled()
		r.endCall(true, span{})
	}
}

// endCall places the call begun last on the clock, from when the task's
// CPU was free, for its CPU time (cpuSoFar); wait says whether it waits
// for its writes, rd is the sectors a read call reads (zero for another
// call).
func (r *modelRun) endCall(wait bool, rd span) {
	t := r.timed
	if t == nil {
		return
	}
	r.now = t.place(t.meter.steps, r.now, t.cpuSoFar(r.cpu.Events()), wait, rd).done
}
