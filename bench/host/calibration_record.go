package host

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/bhsim/bhsim/bench/scenario"
)

// CalibrationSchema is the schema of a CalibrationRecord's JSON.
const CalibrationSchema = "bhsim-host-calibration/1"

// A CalibrationRecord is what a host calibration measured on the kernel,
// before any fit: the runner's own cost per timed call and, for each of
// CalibrationScenarios, the loop device's queue limits and each cell's
// time over its calls in every run. A fit needs nothing else of the host
// (the model's counts come from the model), so a record fitted anywhere,
// without root, gives the profile the host would have (CalibrationRecord.Fit),
// and a corpus can keep the record beside the profile it was fitted to.
type CalibrationRecord struct {
	// Schema is CalibrationSchema.
	Schema string `json:"schema"`
	// Kernel and Machine are the host's uname -r and -m.
	Kernel  string `json:"kernel"`
	Machine string `json:"machine"`
	// Clock is the time measured: "wall" or "cpu" (Clock.String).
	Clock string `json:"clock"`
	// Runs is how many times each scenario ran.
	Runs int `json:"runs"`
	// Harness is the runner's timing cost, measured before the scenarios.
	Harness Harness `json:"harness"`
	// Scenarios are CalibrationScenarios' measurements, in their order.
	Scenarios []RecordedScenario `json:"scenarios"`
}

// RecordedScenario is one calibration scenario's measurements.
type RecordedScenario struct {
	// Name is the scenario's name.
	Name string `json:"name"`
	// Queue is the loop device's queue limits, which the model's device
	// takes (ModelRunner).
	Queue *scenario.QueueLimits `json:"queue"`
	// Cells are its measured cells (hostCells), in their order.
	Cells []RecordedCell `json:"cells"`
}

// RecordedCell is one cell's time in every run.
type RecordedCell struct {
	// Cell is the cell's column ("new", "close", "open", ...).
	Cell string `json:"cell"`
	// Calls is the number of system calls the cell's operations made, the
	// same in every run.
	Calls int `json:"calls"`
	// NS is the total time of the cell's calls, one value per run (Fit
	// divides the runs' median by Calls): on the wall clock its
	// operations' elapsed time, on the CPU clock their thread CPU time.
	NS []float64 `json:"ns"`
}

// ReadCalibrationRecord reads a record as `bhsim calibrate --host
// --record FILE` writes it. Errors: the file's, its JSON's, and a record
// that does not hold together (CalibrationRecord.check).
func ReadCalibrationRecord(name string) (*CalibrationRecord, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r CalibrationRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// WriteFile writes the record as indented JSON to name.
func (r *CalibrationRecord) WriteFile(name string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// check reports what makes r unusable: another schema, an unknown clock,
// a harness or run count that is not positive, a scenario without queue
// limits, a cell without calls, or a cell whose runs are not Runs positive
// times.
func (r *CalibrationRecord) check() error {
	if r.Schema != CalibrationSchema {
		return fmt.Errorf("host: calibration record: schema %q, want %q", r.Schema, CalibrationSchema)
	}
	if _, err := ParseClock(r.Clock); err != nil {
		return fmt.Errorf("host: calibration record: %w", err)
	}
	if r.Runs < 1 || r.Harness.TimerNS <= 0 || r.Harness.SyscallNS <= 0 {
		return fmt.Errorf("host: calibration record: runs %d, timer %g ns, system call %g ns: want all positive", r.Runs, r.Harness.TimerNS, r.Harness.SyscallNS)
	}
	for _, s := range r.Scenarios {
		if s.Queue == nil {
			return fmt.Errorf("host: calibration record: %s has no queue limits", s.Name)
		}
		for _, c := range s.Cells {
			if c.Calls < 1 || len(c.NS) != r.Runs || slices.ContainsFunc(c.NS, func(v float64) bool { return !(v > 0) }) {
				return fmt.Errorf("host: calibration record: %s/%s: %d calls, times %v: want at least one call and %d positive times (one a run)", s.Name, c.Cell, c.Calls, c.NS, r.Runs)
			}
		}
	}
	return nil
}

// scenario returns the recorded scenario called name. Errors: none is.
func (r *CalibrationRecord) scenario(name string) (*RecordedScenario, error) {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i], nil
		}
	}
	return nil, fmt.Errorf("host: calibration record: no scenario %s (recorded by an older calibration? record it again)", name)
}
