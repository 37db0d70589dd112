package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/internal/fanout"
)

// clockRuns are a thread's dd runs on the engine's clock
// (workload.DD.OnClock), by name. Each runs once per profile: the
// calibration's rounds, its report, the notes and the 6.18 figures share
// the runs they have in common. Safe for concurrent use.
type clockRuns struct {
	dds  map[string]workload.DD
	mu   sync.Mutex
	memo map[clockKey]*engine.RunResult
}

// clockKey is one run under one profile's costs.
type clockKey struct {
	run string
	ns  [timing.NumParams]float64
}

// newClockRuns returns an empty set of runs.
func newClockRuns() *clockRuns {
	return &clockRuns{dds: map[string]workload.DD{}, memo: map[clockKey]*engine.RunResult{}}
}

// add names dd's run. Precondition: name is new, and no run is in progress.
func (c *clockRuns) add(name string, dd workload.DD) { c.dds[name] = dd }

// run returns the run called name under p, running it unless it ran under
// p's costs before. Errors: OnClock's, with the run's name.
func (c *clockRuns) run(name string, p *timing.Profile) (*engine.RunResult, error) {
	key := clockKey{name, p.NS}
	c.mu.Lock()
	r, ok := c.memo[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := c.dds[name].OnClock(context.Background(), p, nil)
	if err != nil {
		return nil, fmt.Errorf("dd %s: %w", name, err)
	}
	c.mu.Lock()
	c.memo[key] = r
	c.mu.Unlock()
	return r, nil
}

// all runs every run of names under p, GOMAXPROCS at a time, and returns
// them in order, calling progress (when not nil) after each with the runs
// done and their total. Errors: the first run's that failed.
func (c *clockRuns) all(p *timing.Profile, names []string, progress func(done, total int)) ([]*engine.RunResult, error) {
	out := make([]*engine.RunResult, len(names))
	err := fanout.Run(context.Background(), len(names), 0, func(_ context.Context, i int) error {
		var err error
		out[i], err = c.run(names[i], p)
		return err
	}, progress)
	return out, err
}

// obs is the published figure pub, in MB/s, of the run called name, as an
// observation on the clock: cells of one run share it (Observation.Run).
func (c *clockRuns) obs(name, row, column string, pub float64) timing.Observation {
	dd := c.dds[name]
	return timing.Observation{Row: row, Column: column, Published: pub, Bytes: float64(dd.BS * dd.Count), Run: name,
		Clock: func(p *timing.Profile) (float64, error) {
			r, err := c.run(name, p)
			if err != nil {
				return 0, err
			}
			return r.DurationNS, nil
		}}
}

// calibratedOnClock is calibrated for a thread whose observations run on
// the clock. A fit on the clock reruns the fitted runs at every step (a
// minute or more for a thread), so when p is the thread's built-in profile
// and opts ask for no refit, the fit is the recorded one (Fitted, re-recorded
// by `go test ./bench/threads -run TestFittedProfiles -update`) and so is
// its leave-one-out, at the published size; every cell is still run on
// the clock under it, longFirst's runs (every run, the longest first) run
// first. Otherwise the fit runs here, and its leave-one-out only when
// opts.CrossValidate asks.
func calibratedOnClock(p *timing.Profile, fit timing.Fit, obs []timing.Observation, table timing.Table, opts Options, clock *clockRuns, longFirst []string) (*Reproduction, error) {
	runs := map[string]bool{}
	for _, o := range obs {
		runs[o.Run] = true
	}
	builtin, err := timing.ProfileByName(p.Name)
	if err == nil && builtin.NS == p.NS && !opts.Refit {
		fitted, err := Fitted(p.Name)
		if err != nil {
			return nil, err
		}
		// The runs in longFirst's order, so that no processor waits at
		// the end on a long run started last; the report finds them run.
		if _, err := clock.all(fitted, longFirst, opts.Progress); err != nil {
			return nil, err
		}
		cal, err := timing.Reported(p, fitted, fit, obs)
		if err != nil {
			return nil, err
		}
		table.Cells = cal.Cells
		r := &Reproduction{Profile: fitted, Calibration: cal, Table: table}
		if opts.scale() != 1 {
			r.CrossValidationNote = "leave-one-out: recorded for the published size only"
			return r, nil
		}
		r.CrossValidation, err = recordedCrossValidation(p.Name)
		return r, err
	}
	if opts.Progress != nil { // a fit takes the runs it takes; the report's are left at least
		fit.Progress = func(n int) { opts.Progress(n, n+len(runs)) }
	}
	fitted, cal, err := timing.Calibrate(p, fit, obs)
	if err != nil {
		return nil, err
	}
	table.Cells = cal.Cells
	r := &Reproduction{Profile: fitted, Calibration: cal, Table: table}
	if !opts.CrossValidate && !opts.Refit {
		r.CrossValidationNote = "leave-one-out: not run for a fit from costs other than the built-in profile's (reproduce --cross-validate runs it: one fit on the clock per fitted cell)"
		return r, nil
	}
	fit.Progress = nil
	r.CrossValidation, err = timing.CrossValidate(p, fit, obs)
	return r, err
}

// recordedCrossValidation reads the recorded leave-one-out of the fit of
// profile name, fitted/<name>.cv.json. Errors: no record, or a bad one.
func recordedCrossValidation(name string) ([]timing.LeftOut, error) {
	b, err := fittedFiles.ReadFile("fitted/" + name + ".cv.json")
	if err != nil {
		return nil, fmt.Errorf("threads: no recorded leave-one-out of profile %q: %w", name, err)
	}
	var out []timing.LeftOut
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("threads: fitted/%s.cv.json: %w", name, err)
	}
	return out, nil
}
