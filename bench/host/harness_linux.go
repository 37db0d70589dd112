//go:build linux

package host

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// MeasureHarness measures the Harness on a locked OS thread: the median over
// rounds of each figure's mean per call, which keeps a round's interrupt or
// migration out. It needs no privilege and takes about 0.1 s. Errors: none
// on Linux (the signature matches other systems', which have no runner).
func MeasureHarness() (Harness, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var empty, null []float64
	for range harnessRounds {
		empty = append(empty, timedMean(func() {}))
		null = append(null, timedMean(func() { _, _, _ = unix.Syscall(unix.SYS_GETPPID, 0, 0, 0) }))
	}
	t, n := median(empty), median(null)
	return Harness{TimerNS: t, SyscallNS: max(n-t, 0)}, nil
}

// timedMean is the mean CPU time of harnessCalls calls of call, each timed
// as the runner's timed times a system call.
func timedMean(call func()) float64 {
	var c clock
	var or scenario.OpResult
	for range harnessCalls {
		_ = timed(&or, &c, func() error { call(); return nil })
	}
	return c.cpu.MeanNs
}
