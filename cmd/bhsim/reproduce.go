package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
)

// reproduceMemoryLimit returns the soft heap limit reproduce runs its
// threads under, with procs the GOMAXPROCS it runs at, unless GOMEMLIMIT
// says otherwise (instead of gcpolicy.MemoryLimit). Its heap is bounded
// by design: at most procs dd runs are in progress at a time
// (workload.RunAll), each a machine whose page cache is recycled as it
// goes, beside the small threads; the most a collection found live at 2
// was 234 MB. At gcpolicy.Percent the heap still grew to about 1 GB between two
// collections, and every page of it the process touched first was a page
// fault, 6-20 µs each on the development VM (a guest's first touch):
// 210 000-320 000 faults, about 2 s of system time, for memory that held
// garbage. 256 MiB and 128 MiB per run in progress (512 MiB at 2) leave
// twice the live heap: about 16 collections instead of 10, and 130 000-
// 150 000 faults. It changes no figure.
func reproduceMemoryLimit(procs int) int64 { return 256<<20 + int64(procs)*128<<20 }

// reproduce implements `bhsim reproduce`.
func reproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce")
	format, checkFormat := formatFlag(fs, "text", "csv", "json")
	costs := addCostFlags(fs, "each thread's own; the calibration starts from it", false, nil)
	plotDir := fs.String("plot", "", "write one SVG and one PNG chart per figure into `DIR` (created if missing)")
	crossValidate := fs.Bool("cross-validate", false, "print each fitted cell's leave-one-out error: the error of a fit without that cell (the JSON always has it, but for a thread on the clock fitted from other costs than its built-in profile's, whose leave-one-out runs only with this flag: one more fit per fitted cell)")
	pos, err := parseArgs(fs, report.ReproduceHelp(), args, stdout)
	if err != nil {
		return err
	}
	if err := checkFormat(); err != nil {
		return err
	}
	ths, err := report.ThreadsNamed(pos...)
	if err != nil {
		return asUsage(err)
	}
	profiles := make([]*timing.Profile, len(ths))
	startCosts := make([]string, len(ths))
	for i, t := range ths {
		if profiles[i], startCosts[i], err = resolveCosts(costs, t.Profile); err != nil {
			return err
		}
	}
	if *plotDir != "" { // before the long runs: a bad directory fails at once
		if err := os.MkdirAll(*plotDir, 0o755); err != nil {
			return err
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(reproduceMemoryLimit(runtime.GOMAXPROCS(0))))
	}
	prog := report.ProgressOn(stderr, "bhsim reproduce", namesOf(ths, func(t threads.Thread) string { return t.Name })...)
	results, err := report.RunThreads(ctx, ths, profiles, *crossValidate, prog)
	prog.Finish()
	if err != nil {
		return err
	}
	if *plotDir != "" {
		if err := report.WriteFigures(*plotDir, results...); err != nil {
			return err
		}
	}
	out := report.ReproduceOf(report.CurrentTool(), ths, results, startCosts)
	return printAs(stdout, *format, jsonOf(out), out.WriteCSV, func(w io.Writer) error {
		return report.WriteReproduceText(w, results, *crossValidate)
	})
}
