package host

import (
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Options tune a host run. The zero value runs once with the defaults.
type Options struct {
	// Runs is how many times the scenario runs, each on a fresh device; the
	// result holds each counter's min and max over the runs (0 means 1).
	Runs int
	// Timeout bounds each pass of a run, setup and cleanup excluded (0
	// means DefaultTimeout, plus RulesTime of the scenario's rules).
	Timeout time.Duration
	// TraceBufferKB is the tracing instance's buffer per CPU in KiB (0
	// means TraceBufferFor the scenario). A run whose trace lost events
	// fails, naming a size that would have held them.
	TraceBufferKB int
	// NoSignalHandler leaves SIGINT and SIGTERM alone; by default Run
	// catches them for the run's duration, cleans up and exits the process
	// with status 128+signal.
	NoSignalHandler bool
	// BeforeOp, when not nil, is called before operation k (from 1) of
	// every pass of every run (the counting pass, then the timing pass); an
	// error fails the run there and a panic propagates out of Run, both
	// after cleanup. Tests inject failures with it.
	BeforeOp func(k int) error
	// NoTiming skips each run's timing pass: the result's CPU time is then
	// the counting pass's, tracepoints firing, and it has no wall time.
	// By default each run makes the counting pass, with the tracing
	// instance, for the counters, then the timing pass on a fresh device
	// with the same rules and no tracing instance, for the CPU and wall
	// time the result holds.
	NoTiming bool
	// TraceDump, when not nil, receives each run's raw trace text (the
	// tracing instance's trace file), for reading events the counters sum up.
	TraceDump io.Writer
}

// LoopDiskRuns is how many fresh devices a measurement of the loop disk
// takes its medians over, as validate and record make it: on a virtual
// machine its times vary by a factor of two from one device to the next.
const LoopDiskRuns = 9

// DefaultTimeout is a pass's time bound when Options.Timeout is 0 (with
// RulesTime added).
const DefaultTimeout = 2 * time.Minute

// RulesTime bounds what the device rules of s add to a pass: for each
// blk-throttle rule set, the scenario's pwrite and pread bytes at its
// rate, or in bios of one logical sector at its iops (the bound
// scenario.Rules checks against MaxThrottledTime).
func RulesTime(s *scenario.Scenario) time.Duration {
	r, io := s.Device.Rules, float64(s.TotalIO())
	var secs float64
	for _, bps := range []int64{r.ReadBPS, r.WriteBPS} {
		if bps > 0 {
			secs += io / float64(bps)
		}
	}
	for _, iops := range []int64{r.ReadIOPS, r.WriteIOPS} {
		if iops > 0 {
			secs += io / float64(s.Device.SectorSize()) / float64(iops)
		}
	}
	return time.Duration(secs * float64(time.Second))
}

// DefaultTraceBufferKB is the smallest per-CPU trace buffer TraceBufferFor
// gives.
const DefaultTraceBufferKB = 16384

// traceBudgetKB bounds the buffers TraceBufferFor gives over all CPUs:
// 1 GiB, or DefaultTraceBufferKB per CPU when that is more.
const traceBudgetKB = 1 << 20

// TraceBufferFor is the per-CPU trace buffer, in KiB, a host run of s gets
// when Options.TraceBufferKB is 0: room for the events its I/O can fire
// if they all land on one CPU — per logical sector moved six (a bio of one
// sector, its merge, request and completion events), per 4 KiB page eight
// (page-cache and writeback events), per call sixteen — at 64 bytes an
// event (Linux 6.18 stores about 47), rounded up to a MiB, at least
// DefaultTraceBufferKB and, over the NumCPU CPUs, at most 1 GiB in all
// (and MaxTraceBufferKB). A 64 MiB pwrite at 512-byte sectors, whose
// 396592 events lost 10 % of them in 16 MiB, gets 72 MiB. O(operations).
func TraceBufferFor(s *scenario.Scenario) int {
	io, calls := s.TotalIO(), int64(0)
	for _, op := range s.Ops {
		switch o := op.(type) {
		case scenario.Write:
			calls += int64(o.Calls())
		case scenario.Read:
			calls += int64(o.Calls())
		default:
			calls++
		}
	}
	events := 6*(io/int64(s.Device.SectorSize())+1) + 8*(io/4096+1) + 16*calls + 1024
	kb := (events*64/1024 + 1023) / 1024 * 1024
	most := max(DefaultTraceBufferKB, min(MaxTraceBufferKB, traceBudgetKB/runtime.NumCPU()))
	return int(max(DefaultTraceBufferKB, min(kb, int64(most))))
}

// MaxTraceBufferKB bounds Options.TraceBufferKB (256 MiB per CPU).
const MaxTraceBufferKB = 256 << 10

// MaxRuns bounds Options.Runs.
const MaxRuns = 100

// The host runner's own bounds, tighter than the scenario language's (which
// follow the model's memory, scenario.MaxDeviceSize and MaxTotalIO): the
// run's private tmpfs is sized to the whole device, so that no write can
// outgrow it, and holds in memory what is written, as the loop device's
// page cache holds what is read and written.
const (
	// MaxDeviceSize is the largest device the host runner creates: 1 GiB
	// (its tmpfs takes up to that much memory).
	MaxDeviceSize = 1 << 30
	// MaxTotalIO bounds the bytes a scenario's pwrite and pread calls move
	// on the host: 64 MiB (and so the events its trace buffer holds).
	MaxTotalIO = 64 << 20
)

// CheckBounds refuses, with a *scenario.BoundError, a scenario past the
// host runner's bounds (MaxDeviceSize, MaxTotalIO); Run calls it first.
// O(operations).
func CheckBounds(s *scenario.Scenario) error {
	const why = "its private tmpfs, sized to the device, and the device's page cache live in memory; the model takes up to "
	switch {
	case s.Device.Size > MaxDeviceSize:
		return &scenario.BoundError{Runner: "host", What: "device size", Value: s.Device.Size, Bound: MaxDeviceSize,
			Why: why + scenario.FormatSize(scenario.MaxDeviceSize)}
	case s.TotalIO() > MaxTotalIO:
		return &scenario.BoundError{Runner: "host", What: "pwrite and pread total", Value: s.TotalIO(), Bound: MaxTotalIO,
			Why: why + scenario.FormatSize(scenario.MaxTotalIO)}
	}
	return nil
}

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("host: the host runner needs Linux (loop devices and tracefs)")

func (o Options) withDefaults(s *scenario.Scenario) (Options, error) {
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout + RulesTime(s)
	}
	switch {
	case o.Runs < 0 || o.Runs > MaxRuns:
		return o, errors.New("host: Options.Runs must be from 1 to 100")
	case o.Timeout < 0:
		return o, errors.New("host: Options.Timeout is negative")
	case o.TraceBufferKB < 0 || o.TraceBufferKB > MaxTraceBufferKB: // 0: TraceBufferFor
		return o, errors.New("host: Options.TraceBufferKB must be from 1 to 262144")
	}
	return o, nil
}
