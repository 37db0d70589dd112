package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
)

// validateSynopsis is `bhsim validate`'s help text.
const validateSynopsis = `[--on recorded|host] [--recorded DIR] [--runs N] [--kernel NAME] [--profile NAME|FILE] [--rows totals|all|diff] [--format text|json] DIR|FILE...

Runs every scenario (*.scn of each DIR, or each FILE) on the model and sets
it beside the kernel's result: with --on recorded (the default) the result
recorded on Linux 6.18 (NAME.json in --recorded DIR, by default the
scenario directory's own kernel/6.18 or else ../kernel/6.18 beside it), with --on host a run on
this machine's kernel (root, loop devices and tracefs; --runs runs each, so
that counters the kernel does not repeat compare as a range). The model
runs over the queue limits the kernel's device had. Prints one table —
scenario, operation, counter or result, model, kernel, equal — and a
summary line; --rows picks the rows (totals: each scenario's summed
counters, its fsync results and every row that differs; all; diff: only
rows that differ). Exits 1 when a row differs, but on the host for the rows
docs/known-differences.md lists, which it marks and counts.

Where the kernel's results hold elapsed times (a timed corpus such as
testdata/timed), the model runs on its clock priced by --profile (default:
the profile x86-host.json beside the first scenario, the host calibration
the corpus was recorded with; with --on host, a calibration measured on
this machine before the first scenario, as calibrate --host makes it, ten
seconds) over the loop disk measured with the recording (disk/loop.json
in its results' directory; the built-in one where there is none; with
--on host, measured on this machine before the first timed run), and every
operation, and total, that took at least 1 ms is compared: within when
inside the kernel's min..max widened by 5 % (10 % for one run). A summary
line counts them; times never make validate fail.`

// validate implements `bhsim validate`.
func validate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate")
	on := fs.String("on", "recorded", "the kernel's side: recorded (results recorded on Linux 6.18) or host (run now; needs root)")
	recorded := fs.String("recorded", "", "directory of recorded results `DIR` (default: each scenario's directory's kernel/6.18, or ../kernel/6.18 beside it)")
	var ho host.Options
	fs.IntVar(&ho.Runs, "runs", 3, "runs per scenario on the host (--on host; 1 to "+strconv.Itoa(host.MaxRuns)+")")
	fs.IntVar(&ho.TraceBufferKB, "trace-buffer-kb", 0, "the host's trace buffer per CPU in `KiB` (--on host; default: sized from each scenario's I/O; at most 262144)")
	kernel := fs.String("kernel", "6.18", "the model's kernel `preset`: "+strings.Join(engine.KernelNames(), ", "))
	rows := fs.String("rows", "totals", "rows to print: totals, all, diff")
	profile := fs.String("profile", "", "the `profile` (a built-in NAME or a FILE) that prices the model's time (default: x86-host.json beside the first scenario, if there is one)")
	format, check := formatFlag(fs, "text", "json")
	pos, err := parseArgs(fs, validateSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if r := report.Rows(*rows); r != report.RowsTotals && r != report.RowsAll && r != report.RowsDiff {
		return usagef("unknown --rows %q (valid: totals, all, diff)", *rows)
	}
	k, err := engine.KernelByName(*kernel)
	if err != nil {
		return asUsage(err)
	}
	if len(pos) == 0 {
		return usagef("want at least one scenario DIR or FILE")
	}
	scns, err := report.ScenarioFiles(pos...)
	if err != nil {
		return asUsage(err)
	}
	side, err := kernelSide(fs, *on, *recorded, ho)
	if err != nil {
		return err
	}
	prof, err := validateProfile(*profile, pos[0])
	if err != nil {
		return err
	}
	if *on == "host" && *profile == "" && prof != nil {
		if prof, err = calibrateNow(ctx); err != nil {
			return err
		}
	}
	vo := report.ValidateOptions{On: *on, Kernel: k, Tool: report.CurrentTool(), Profile: prof}
	if prof != nil {
		vo.Disk = validateDisk(*on, *recorded)
	}
	prog := report.ProgressOn(stderr, "bhsim validate", "scenarios")
	vo.Progress = prog.Task(0)
	v, err := report.Validate(ctx, scns, side, vo)
	prog.Finish()
	if errors.As(err, new(*report.NoRecordingError)) {
		return fmt.Errorf("%w (record one with --on host, or give --recorded DIR)", err)
	}
	if err != nil {
		return err
	}
	if err := printAs(stdout, *format, jsonOf(v), nil, func(w io.Writer) error { return v.WriteText(w, report.Rows(*rows)) }); err != nil {
		return err
	}
	if d := v.Summary.Unexpected(); d > 0 && *on == "host" {
		return fmt.Errorf("%d of %d compared values differ, and docs/known-differences.md does not list them as a live run's (%d known)", d, v.Summary.Total, v.Summary.Known)
	} else if d > 0 {
		return fmt.Errorf("%d of %d compared values differ from the recording, which is held to every value (docs/known-differences.md says why of those it lists)", d, v.Summary.Total)
	}
	return nil
}

// kernelSide returns the kernel's side --on names: results recorded in
// --recorded DIR, or runs on the host with options o (--runs times each).
// Flags of the other side that were set are refused.
func kernelSide(fs *flag.FlagSet, on, recorded string, o host.Options) (report.KernelSide, error) {
	set := setFlags(fs)
	switch on {
	case "recorded":
		if set["runs"] || set["trace-buffer-kb"] {
			return nil, usagef("--runs and --trace-buffer-kb apply to --on host (a recording holds the runs it was made with)")
		}
		return report.Recorded(recorded), nil
	case "host":
		if set["recorded"] {
			return nil, usagef("--recorded applies to --on recorded")
		}
		if err := hostReady(&o); err != nil {
			return nil, err
		}
		return func(ctx context.Context, _ string, s *scenario.Scenario) (*scenario.Result, error) {
			return host.Run(ctx, s, o)
		}, nil
	}
	return nil, usagef("unknown --on %q (valid: recorded, host)", on)
}

// validateDisk returns where a timed validation's model gets its loop disk:
// the one measured with each recording (--on recorded; the built-in where a
// recording has none), or one measured on the host at the first timed
// scenario (--on host), as a recording's was.
func validateDisk(on, recorded string) report.DiskSide {
	if on != "host" {
		return report.RecordedDisk(recorded)
	}
	var l *scenario.LoopDisk
	return func(ctx context.Context, _ string, _ *scenario.Result) (*scenario.LoopDisk, string, error) {
		if l == nil {
			var err error
			if l, err = host.MeasureLoopDisk(ctx, host.LoopDiskRuns); err != nil {
				return nil, "", err
			}
		}
		return l, "the host's loop device, measured now", nil
	}
}

// calibrateNow measures and fits a host calibration on the wall clock, as
// `bhsim calibrate --host` does: the CPU prices of a live validation of a
// timed corpus, taken in its own sitting as the corpus's recording took
// its x86-host.json, so that the model is priced by the machine as it is
// when the kernel runs, not as it was when the corpus was recorded.
// Errors: the host runner's, the fit's.
func calibrateNow(ctx context.Context) (*timing.Profile, error) {
	rec, err := host.Measure(ctx, host.ClockWall, host.Options{Runs: calibrateRuns, NoSignalHandler: true})
	if err != nil {
		return nil, err
	}
	c, err := fitRecord(ctx, rec)
	if err != nil {
		return nil, err
	}
	c.Profile.Description += ", calibrated before the first scenario"
	return c.Profile, nil
}

// hostProfileFile is the host calibration a timed corpus carries beside its
// scenarios.
const hostProfileFile = "x86-host.json"

// validateProfile returns the profile --profile names or, when it is not
// given, the corpus's x86-host.json beside the first scenario path (a
// directory, or a file's directory); nil when there is none.
func validateProfile(name, first string) (*timing.Profile, error) {
	if name != "" {
		p, _, err := (&report.Costs{Profile: name, Costs: "built-in"}).Resolve("")
		return p, flagError(err)
	}
	dir := first
	if st, err := os.Stat(first); err == nil && !st.IsDir() {
		dir = filepath.Dir(first)
	}
	path := filepath.Join(dir, hostProfileFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	return timing.LoadProfile(path)
}
