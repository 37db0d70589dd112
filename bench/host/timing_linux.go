//go:build linux

package host

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// runPasses is one run of s: the counting pass, with the tracing
// instance, for the counters, then (unless opts.NoTiming) the timing pass
// on another fresh device with the same rules and no tracing instance, for
// time. The counting pass's result is returned with the timing pass's
// CPU and wall time in place of its own: time the kernel without
// tracepoints firing, count it with them.
func runPasses(ctx context.Context, s *scenario.Scenario, opts Options) (*scenario.Result, error) {
	counted, err := runOnce(ctx, s, opts, false)
	if err != nil || opts.NoTiming {
		return counted, err
	}
	timed, err := runOnce(ctx, s, opts, true)
	if err != nil {
		return nil, fmt.Errorf("the timing pass: %w", err)
	}
	return counted, takeTime(counted, timed)
}

// takeTime puts the timing pass's per-operation CPU and wall time, and its
// total wall time, in the counting pass's result. The two passes must have
// ended every operation alike (errno, calls, bytes, block size), or the
// time would be of other work than was counted.
func takeTime(counted, timed *scenario.Result) error {
	outcome := func(o scenario.OpResult) string {
		return fmt.Sprintf("errno %q after %d calls, %d bytes, block size %d", o.Errno, o.Calls, o.Bytes, o.BlockSize)
	}
	for i := range counted.Ops {
		c, t := &counted.Ops[i], timed.Ops[i]
		if oc, ot := outcome(*c), outcome(t); oc != ot {
			return fmt.Errorf("host: op %d (%s): the timing pass ended with %s, the counting pass with %s: its time would be of other work", i+1, c.Op, ot, oc)
		}
		c.CPU, c.Wall = t.CPU, t.Wall
	}
	counted.Wall = timed.Wall
	return nil
}

// clock times one operation's system calls. In the counting pass it
// takes each call's thread CPU time (CLOCK_THREAD_CPUTIME_ID), and no
// elapsed time: tracepoints fire there.
//
// In the timing pass (whole) it times the operation's calls together: the
// elapsed time from the first call's start to the end of the loop that
// makes them, and the thread CPU time over them, read once at each end. Between two calls the
// kernel goes on with what the first left running — readahead, bios blk-
// throttle holds, writeback — so the time between calls belongs to the
// operation; and what the runner does there must be next to nothing, so
// no clock is read per call: not the CPU clock (a system call, about
// 0.6 µs for a pair on a virtual machine, which summing only the calls'
// own times would have left out: under rbps=8M, 1024 cold 4 KiB preads
// summed 483 ms where they took 505 ms, as the model's clock has them),
// and not the wall clock either (time.Now took 137 ns a call through the
// vDSO on 2026-12-03's VM, and a reading after every call put 150–250 ns
// of the runner's into each 4 KiB pwrite of a 1.3 µs rewrite).
type clock struct {
	cpu  scenario.Measurement
	wall time.Duration

	whole bool
	// single marks an operation of one call (not a pwrite or pread line),
	// whose runner work after the call (BLKBSZGET after an open) must stay
	// out of its time: its clock stops as the call returns.
	single  bool
	n       int
	cpu0    int64
	start   time.Time
	stopped bool
}

// timed runs one system call, times it on c and counts it.
func timed(or *scenario.OpResult, c *clock, call func() error) error {
	var err error
	if c.whole {
		if c.n == 0 {
			c.cpu0, c.start = cpuNow(), time.Now()
		}
		err = call()
		c.n++
		if c.single {
			c.stop()
		}
	} else {
		t0 := cpuNow()
		err = call()
		c.cpu.Add(cpuNow() - t0)
	}
	or.Calls++
	if err != nil {
		or.Errno = errnoName(err)
	}
	return err
}

// stop ends a timing-pass operation's clock, called as the loop of its
// calls ends (at once for a single call): its elapsed time and its CPU
// time, pooled over its calls. Later calls of stop do nothing, and neither
// does it in the counting pass.
func (c *clock) stop() {
	if !c.whole || c.n == 0 || c.stopped {
		return
	}
	c.stopped = true
	c.wall = time.Since(c.start)
	c.cpu.AddPooled(cpuNow()-c.cpu0, c.n)
}

// cpuNow is the calling thread's CPU time in nanoseconds.
func cpuNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

// totalWall is the scenario's elapsed time of a timing pass: its
// operations' wall times summed, from the first call's start to the last
// one's end with the runner's own time between calls and operations (CPU
// clock readings, the waits for an idle device) taken out.
func totalWall(r *scenario.Result) *scenario.Span {
	var total int64
	for _, o := range r.Ops {
		if o.Wall != nil {
			total += o.Wall.MinNs
		}
	}
	return scenario.SpanOf(time.Duration(total))
}
