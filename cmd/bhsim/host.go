package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/timing"
)

// calibrateSynopsis is `bhsim calibrate`'s help text.
const calibrateSynopsis = `--host [--clock wall|cpu] [--runs N] [--record FILE] [--save FILE] | --recorded FILE [--save FILE]

Measures, on this machine's kernel, the time per call of a set of
microbenchmarks (4 KiB pwrites at block sizes 512 to 4096 into new, dirty
and clean cached pages, with and without fsync, and the last close that
throws the pages away; cached preads; BLKBSZSET; open and close), runs the
same scenarios on the model for their event counts, measures what its own
timing and a null system call cost, fits some of the x86-server profile's
costs to the 512- to 2048-byte scenarios, 64 KiB pwrites and open/close,
and predicts the 4096-byte scenario, cached preads and BLKBSZSET: it
prints both groups' errors. --clock wall (the default) fits the
elapsed time of a pass without tracepoints, the time validate compares,
leaving the fsyncs out (their time is the disk's): a copied byte, a read
or write call's fixed part, a new folio and buffer_head, a freed folio and
buffer_head, a device file's open and release. --clock cpu fits the thread
CPU time of the counting pass, tracepoints firing: a tracepoint, a copied
byte, a call's fixed part, a new folio, a device file's open and release. Needs root, loop devices and
tracefs (each run uses a private loop device, tmpfs and tracing instance,
removed afterwards); without root it says so and does nothing. The fitted
profile, x86-host, is written to FILE (bhsim-host.json by default) in the
form every command's --profile FILE reads; nothing reads it unless told to.
--record FILE also writes what was measured, before any fit (the runner's
timing cost, each cell's time in every run, the loop device's queue
limits); --recorded FILE fits such a record instead of measuring, without
root, and gives the profile the measuring machine got: testdata/timed
keeps the record its x86-host.json was fitted to (calibration.json).`

// fitRecord fits a host calibration record as bhsim does wherever it
// fits one: the x86 server's priors, the fit of the record's clock
// (host.HostFit), the 6.18 model over the queue limits recorded. Errors:
// the fit's.
func fitRecord(ctx context.Context, rec *host.CalibrationRecord) (*host.HostCalibration, error) {
	clock, err := host.ParseClock(rec.Clock)
	if err != nil {
		return nil, err
	}
	return rec.Fit(ctx, timing.X86Server(), host.HostFit(clock), engine.RunOnQueue)
}

// calibrateRuns is how many times a host calibration runs each of its
// scenarios by default (calibrate --runs; validate --on host's own).
const calibrateRuns = 5

// calibrate implements `bhsim calibrate`.
func calibrate(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("calibrate")
	onHost := fs.Bool("host", false, "measure on this machine's kernel (needs root)")
	clockName := fs.String("clock", "wall", "with --host, the time measured and fitted: `wall` (untraced elapsed time) or cpu (traced thread CPU time)")
	runs := fs.Int("runs", calibrateRuns, "with --host, runs of each scenario; each cell keeps the median (1 to "+strconv.Itoa(host.MaxRuns)+")")
	record := fs.String("record", "", "with --host, also write the measurements to `FILE`, before the fit")
	recorded := fs.String("recorded", "", "fit the measurements recorded in `FILE` (calibrate --host --record) instead of measuring")
	save := fs.String("save", "bhsim-host.json", "write the fitted profile to `FILE`")
	pos, err := parseArgs(fs, calibrateSynopsis, args, stdout)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	switch {
	case *onHost == (*recorded != ""):
		return usagef("want exactly one of --host (measure this machine's kernel) and --recorded FILE (fit a recorded calibration)")
	case *recorded != "" && (*record != "" || set["clock"] || set["runs"]):
		return usagef("--recorded FILE fits what FILE holds: --record, --clock and --runs go with --host")
	case len(pos) != 0:
		return usagef("calibrate takes no arguments, got %d", len(pos))
	case *runs < 1 || *runs > host.MaxRuns:
		return usagef("--runs %d: want 1 to %d", *runs, host.MaxRuns)
	}
	clock, err := host.ParseClock(*clockName)
	if err != nil {
		return usagef("--clock: %v", err)
	}
	var rec *host.CalibrationRecord
	if *recorded != "" {
		if rec, err = host.ReadCalibrationRecord(*recorded); err != nil {
			return err
		}
	} else {
		if os.Geteuid() != 0 {
			_, err := fmt.Fprintln(stdout, "calibrate --host: skipped: it needs root (loop devices and tracefs on this machine's kernel)")
			return err
		}
		if rec, err = host.Measure(ctx, clock, host.Options{Runs: *runs, NoSignalHandler: true}); err != nil {
			return err
		}
		if *record != "" {
			if err := rec.WriteFile(*record); err != nil {
				return err
			}
		}
	}
	c, err := fitRecord(ctx, rec)
	if err != nil {
		return err
	}
	if err := report.WriteJSONFile(*save, c.Profile); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s\nprofile %s written to %s (use it with --profile %s)\n", c.Report(), c.Profile.Name, *save, *save); err != nil {
		return err
	}
	if *record != "" {
		_, err = fmt.Fprintf(stdout, "measurements written to %s (fit them again with --recorded %s)\n", *record, *record)
	}
	return err
}

// cleanSynopsis is `bhsim clean`'s help text.
const cleanSynopsis = `

Removes what host runs (run --on host, validate --on host, calibrate
--host) left behind when their process was killed with SIGKILL, which no
handler sees: the blkio throttle rules (cgroup v1 root group) on their loop
devices, removed first so that no held I/O blocks the rest, then the loop
devices (with their queue and dirty-limit settings), tracing instances,
mounts and private directories, each named for the process that made it.
Only those of processes that no longer run are removed; nothing else is
touched. Needs
root, loop devices and tracefs, as the runs do; without them it says what
is missing and does nothing. Prints what it removed.`

// clean implements `bhsim clean`.
func clean(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("clean")
	pos, err := parseArgs(fs, cleanSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("clean takes no arguments, got %d", len(pos))
	}
	if err := host.Check(); err != nil {
		_, err := fmt.Fprintf(stdout, "clean: skipped: %v\n", err)
		return err
	}
	removed, err := host.CleanStale()
	for _, r := range removed {
		if _, werr := fmt.Fprintf(stdout, "removed %s\n", r); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		_, err = fmt.Fprintln(stdout, "clean: nothing left behind by a dead run")
	}
	return err
}
