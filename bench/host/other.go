//go:build !linux

package host

import (
	"context"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Check reports why the host runner cannot run here: on this system, always
// ErrUnsupported.
func Check() error { return ErrUnsupported }

// Run returns ErrUnsupported: the host runner needs Linux. The model side
// (the model runner, engine.RunModel) works everywhere.
func Run(ctx context.Context, s *scenario.Scenario, opts Options) (*scenario.Result, error) {
	return nil, ErrUnsupported
}

// MeasureHarness returns ErrUnsupported: there is no host runner here.
func MeasureHarness() (Harness, error) { return Harness{}, ErrUnsupported }

// CleanStale does nothing on this system.
func CleanStale() ([]string, error) { return nil, nil }

// Leftovers returns ErrUnsupported: there is no host runner here.
func Leftovers(pid int) ([]string, error) { return nil, ErrUnsupported }

// MeasureLoopDisk returns ErrUnsupported: there is no host runner here.
func MeasureLoopDisk(ctx context.Context, runs int) (*scenario.LoopDisk, error) {
	return nil, ErrUnsupported
}
