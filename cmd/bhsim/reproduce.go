package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
)

// reproduceSynopsis is the first lines of `bhsim reproduce --help`.
func reproduceSynopsis() string {
	var sb strings.Builder
	sb.WriteString("[--format text|csv|json] [--profile NAME|FILE] [--cost PARAM=NS] [--plot DIR] [--cross-validate] [thread ...]\n\n" +
		"Reproduces the named LKML threads (all by default), each on the profile of the machine it was\n" +
		"measured on unless --profile names another: the published table beside the simulated one, every\n" +
		"cell labelled fitted, fitted (shared run), input or predicted, with its error. Threads:\n\n")
	for _, t := range threads.All() {
		fmt.Fprintf(&sb, "  %-10s %s (profile %s)\n", t.Name, t.Subject, t.Profile)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// reproduce implements `bhsim reproduce`.
func reproduce(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce")
	format, checkFormat := formatFlag(fs, "text", "csv", "json")
	costs := addCostFlags(fs, "each thread's own; the calibration starts from it", false, nil)
	plotDir := fs.String("plot", "", "write one SVG and one PNG chart per figure into `DIR` (created if missing)")
	crossValidate := fs.Bool("cross-validate", false, "print each fitted cell's leave-one-out error: the error of a fit without that cell (the JSON always has it)")
	pos, err := parseArgs(fs, reproduceSynopsis(), args, stdout)
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
	prog := progressOn(stderr, "reproduce", namesOf(ths, func(t threads.Thread) string { return t.Name })...)
	results, err := report.RunThreads(interrupt, ths, profiles, prog)
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
