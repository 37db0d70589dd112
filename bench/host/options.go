package host

import (
	"errors"
	"io"
	"time"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Options tune a host run. The zero value runs once with the defaults.
type Options struct {
	// Runs is how many times the scenario runs, each on a fresh device; the
	// result holds each counter's min and max over the runs (0 means 1).
	Runs int
	// Timeout bounds one run, setup and cleanup excluded (0 means 2 minutes).
	Timeout time.Duration
	// TraceBufferKB is the tracing instance's buffer per CPU in KiB (0 means
	// 16384). A run whose trace lost events fails.
	TraceBufferKB int
	// NoSignalHandler leaves SIGINT and SIGTERM alone; by default Run
	// catches them for the run's duration, cleans up and exits the process
	// with status 128+signal.
	NoSignalHandler bool
	// BeforeOp, when not nil, is called before operation k (from 1) of
	// every run; an error fails the run there and a panic propagates out of
	// Run, both after cleanup. Tests inject failures with it.
	BeforeOp func(k int) error
	// TraceDump, when not nil, receives each run's raw trace text (the
	// tracing instance's trace file), for reading events the counters sum up.
	TraceDump io.Writer
}

// DefaultTimeout is a run's time bound when Options.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// DefaultTraceBufferKB is the per-CPU trace buffer when Options.TraceBufferKB
// is 0.
const DefaultTraceBufferKB = 16384

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

func (o Options) withDefaults() (Options, error) {
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TraceBufferKB == 0 {
		o.TraceBufferKB = DefaultTraceBufferKB
	}
	switch {
	case o.Runs < 0 || o.Runs > MaxRuns:
		return o, errors.New("host: Options.Runs must be from 1 to 100")
	case o.Timeout < 0:
		return o, errors.New("host: Options.Timeout is negative")
	case o.TraceBufferKB < 0 || o.TraceBufferKB > MaxTraceBufferKB:
		return o, errors.New("host: Options.TraceBufferKB must be from 1 to 262144")
	}
	return o, nil
}
