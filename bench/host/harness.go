package host

// Harness is what the runner's timing adds to every timed system call, as
// measured on this machine: the empty interval between two readings of the
// thread's CPU clock, and a system call that does nothing (getppid), both
// made the way the runner makes its calls (golang.org/x/sys/unix through the
// Go runtime's system-call entry).
type Harness struct {
	// TimerNS is the CPU time of an empty timed interval: what one pair of
	// CLOCK_THREAD_CPUTIME_ID readings adds to the call it brackets.
	TimerNS float64 `json:"timer_ns"`
	// SyscallNS is a null system call's CPU time, the empty interval taken
	// out: entry, exit and the Go runtime's part.
	SyscallNS float64 `json:"syscall_ns"`
}

// harnessRounds and harnessCalls shape MeasureHarness: the median of
// harnessRounds means of harnessCalls calls each.
const harnessRounds, harnessCalls = 9, 20000
