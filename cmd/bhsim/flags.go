package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/workload"
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// asUsage marks err, if any, as a mistake in the command line.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// flagOf names the flag that sets each field of the library a
// *report.FieldError names.
var flagOf = map[string]string{"Costs.Set": "--cost", "Shard": "--shard", "WorkloadSpec.Seed": "-s", "WorkloadSpec.Dev": "--dev", "WorkloadSpec.TraceFormat": "--trace-format",
	"WorkloadSpec.LBS": "--lbs", "WorkloadSpec.Replay": "--replay", "WorkloadSpec.Memory": "--memory", "WorkloadSpec.MRC": "--mrc", "WorkloadSpec.CSVColumns": "--csv-columns", "WorkloadSpec.ReplayTimeScale": "--replay-time-scale", "WorkloadSpec.Rules": "--rules"}

// flagError returns err, if any, as a mistake in the command line, a
// *report.FieldError's field said as the flag that sets it.
func flagError(err error) error {
	var fe *report.FieldError
	var ae *report.AxisError
	switch {
	case errors.As(err, &fe) && flagOf[fe.Field] != "":
		return usagef("%s %q: %v", flagOf[fe.Field], fe.Value, fe.Err)
	case errors.As(err, &ae): // a sweep's axis: its flag is --AXIS
		return usagef("--%s: %v", ae.Axis, ae.Err)
	}
	return asUsage(err)
}

// shardOf reads --shard's K/N (report.ParseShard) for a run whose output
// is in format: a shard writes json or csv, which bhsim merge joins.
func shardOf(v, format string) (report.Shard, error) {
	sh, err := report.ParseShard(v)
	if err == nil && sh.Count > 0 && format == "text" {
		return sh, usagef("--shard writes json or csv, which bhsim merge joins: add --format json or --format csv")
	}
	return sh, flagError(err)
}

// fieldFlags names, for the library's fields that choose what of a trace
// to replay, the flags that set them, in a usage error's message.
var fieldFlags = strings.NewReplacer("with TraceSelect.Device)", "with --trace-dev)", "with TraceSelect.File)", "with --trace-file)",
	"(TraceSelect.Action D)", "(--replay D)", "(TraceDevice.Size)", "(--dev)", "(TraceDevice.OnePass)", "(--one-pass)", "(RunOptions.CPUs)", "(--cpus)", "Options.TraceBufferKB", "--trace-buffer-kb",
	"(RunModel runs the scenario itself)", "(bhsim run FILE, without --dist or --step, runs the scenario itself)")

// errHelp is returned once --help has printed a command's help.
var errHelp = errors.New("help shown")

// newFlags returns a quiet flag set for command name: parseArgs reports its
// errors and prints its help.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses args with fs, flags before or after the positional
// arguments, and returns the positional ones. --help prints "usage: bhsim
// NAME synopsis" and the flags on stdout and returns errHelp; a bad flag
// returns a usageError naming the command's flags.
func parseArgs(fs *flag.FlagSet, synopsis string, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
			if errors.Is(err, flag.ErrHelp) {
				line, rest, _ := strings.Cut(synopsis, "\n")
				fmt.Fprintf(stdout, "%s\n", strings.TrimSpace("usage: bhsim "+fs.Name()+" "+line))
				fmt.Fprintf(stdout, "%s\n", rest)
				if len(names) > 0 {
					// The flag package prints -name; the usage lines say --name.
					var b strings.Builder
					fs.SetOutput(&b)
					fs.PrintDefaults()
					fmt.Fprintf(stdout, "\nflags:\n%s", strings.ReplaceAll("\n"+b.String(), "\n  -", "\n  --")[1:])
				}
				return nil, errHelp
			}
			// The flag package names a flag -name; the usage lines say --name.
			msg := strings.Replace(strings.Replace(err.Error(), ": -", ": --", 1), "for flag -", "for flag --", 1)
			return nil, usagef("%s (flags: %s; --help explains them)", msg, strings.Join(names, ", "))
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// formatFlag adds --format to fs and returns a function that checks it.
func formatFlag(fs *flag.FlagSet, valid ...string) (*string, func() error) {
	f := fs.String("format", valid[0], "output `format`: "+strings.Join(valid, ", "))
	return f, func() error {
		for _, v := range valid {
			if *f == v {
				return nil
			}
		}
		return usagef("unknown format %q (valid: %s)", *f, strings.Join(valid, ", "))
	}
}

// listFlag is a flag that may be given several times, or with comma-separated values.
type listFlag = report.List

// namesOf returns the name of each of xs, in order.
func namesOf[T any](xs []T, name func(T) string) []string { return report.Names(xs, name) }

// printAs prints in format ("json", "csv" or "text") with the writer of
// that format (nil for one the command does not offer).
func printAs(w io.Writer, format string, json, csv, text func(io.Writer) error) error {
	switch format {
	case "json":
		return json(w)
	case "csv":
		return csv(w)
	}
	return text(w)
}

// jsonOf returns the writer of v's JSON (report.WriteJSON).
func jsonOf(v any) func(io.Writer) error {
	return func(w io.Writer) error { return report.WriteJSON(w, v) }
}

// budgeted calls run, stopped by an interrupt, under a report.Budget for
// command name: a progress line of unit on a terminal, else a one-line
// estimate of a long run, and the refusal of one estimated past
// report.RunLimit, which less says how to shorten. The refusal and a dd
// the model refuses (workload.ErrInvalidDD) are usage errors.
func budgeted(ctx context.Context, stderr io.Writer, name, unit, less string, run func(ctx context.Context, progress func(done, total int)) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The budget starts its clock before the progress line starts its own,
	// so that a report late enough for the progress's first line (after a
	// second) is late enough for the budget's estimate (after a second,
	// made first in the same report), but for the nanoseconds between the
	// two clocks' readings: a refused run prints its refusal alone. (With
	// the progress started first, a report in the microseconds between the
	// two starts' seconds drew a line before the refusal, once in a CI
	// run of TestErrors.)
	var next func(done, total int)
	guard := report.NewBudget(stderr, "bhsim "+name, unit, less, func(done, total int) { next(done, total) }, cancel)
	prog := report.ProgressOn(stderr, "bhsim "+name, unit)
	next = prog.Task(0)
	err := guard.Err(run(ctx, guard.Report))
	prog.Finish()
	var over *report.OverBudgetError
	if errors.As(err, &over) || errors.Is(err, workload.ErrInvalidDD) {
		return asUsage(err)
	}
	return err
}

// setFlags returns the names of the flags of fs the command line set.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
