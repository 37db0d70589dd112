package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/internal/fanout"
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
	costs := addCostFlags(fs, "each thread's own; the calibration starts from it", false)
	plotDir := fs.String("plot", "", "write one SVG and one PNG chart per figure into `DIR` (created if missing)")
	crossValidate := fs.Bool("cross-validate", false, "print each fitted cell's leave-one-out error: the error of a fit without that cell (the JSON always has it)")
	pos, err := parseArgs(fs, reproduceSynopsis(), args, stdout)
	if err != nil {
		return err
	}
	if err := checkFormat(); err != nil {
		return err
	}
	var ths []threads.Thread
	for _, n := range pos {
		t, err := threads.ByName(n)
		if err != nil {
			return asUsage(err)
		}
		if !slices.ContainsFunc(ths, func(x threads.Thread) bool { return x.Name == n }) {
			ths = append(ths, t)
		}
	}
	if len(ths) == 0 {
		ths = threads.All()
	}
	profiles := make([]*timing.Profile, len(ths))
	startCosts := make([]string, len(ths))
	for i, t := range ths {
		def := t.Profile
		if profiles[i], startCosts[i], err = costs.resolve(def); err != nil {
			return err
		}
	}
	if *plotDir != "" { // before the long runs: a bad directory fails at once
		if err := os.MkdirAll(*plotDir, 0o755); err != nil {
			return err
		}
	}
	var names []string
	for _, t := range ths {
		names = append(names, t.Name)
	}
	prog := newProgress(stderr, isTerminal(stderr), "reproduce", names...)
	results := make([]*threads.Reproduction, len(ths))
	// Every thread at once: their dd runs share GOMAXPROCS slots
	// (workload.RunAll), so no more dd page caches are in memory at a time
	// than one thread alone holds (alloc's writetest and lru's lookups, which
	// are small, run beside them), and no processor waits while one thread's
	// last long run finishes and the next thread's could start.
	err = fanout.Run(context.Background(), len(ths), len(ths), func(_ context.Context, i int) error {
		var err error
		results[i], err = ths[i].Run(profiles[i], threads.Options{Progress: prog.task(i)})
		return err
	}, nil)
	prog.finish()
	if err != nil {
		return err
	}
	if *plotDir != "" {
		for _, r := range results {
			for _, f := range r.Figures {
				if err := writeFigure(*plotDir, f); err != nil {
					return err
				}
			}
		}
	}
	out := reproduceOut{Schema: reproduceSchema, Tool: tool()}
	for i, r := range results {
		out.Threads = append(out.Threads, threadOf(r, ths[i].Subject, startCosts[i]))
	}
	switch *format {
	case "json":
		return writeJSON(stdout, out)
	case "csv":
		return reproduceCSV(stdout, out.Threads)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		text := r.Text()
		if *crossValidate {
			text += "\n" + r.CrossValidationText()
		}
		if _, err := fmt.Fprint(stdout, text); err != nil {
			return err
		}
	}
	return nil
}
