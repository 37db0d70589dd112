// Command bhsim runs bhsim's reproductions of the LKML threads on the model,
// sweeps a dd over a parameter grid, runs scenarios, traces and generators
// on the model or the host kernel, sets the model beside the kernel,
// explains what one operation costs, shows the hardware profiles that price
// it and fits one to the host.
//
// Usage:
//
//	bhsim reproduce [--format text|csv|json] [--profile NAME|FILE] [--cost P=NS] [--plot DIR] [--cross-validate] [thread ...]
//	bhsim sweep [--machine NAME] [--profile NAME|FILE] [--costs fitted|built-in] [--cost P=NS] [axis flags] [--format text|csv|json] [--shard K/N]
//	bhsim run [--on model|host] [--kernel NAME] [--runs N] [--format text|csv|json] FILE.scn
//	bhsim run [workload flags] TRACE... [--shard K/N] | --gen SPEC [-s SEED] | --dist FILE.scn | --step [--quiz [--show]] [-s SEED]
//	bhsim validate [--on recorded|host] [--recorded DIR] [--runs N] [--kernel NAME] [--rows totals|all|diff] [--format text|json] DIR|FILE...
//	bhsim merge FILE...
//	bhsim explain OP [--profile NAME|FILE] [--costs fitted|built-in] [--cost P=NS] [op flags]
//	bhsim profile list | show NAME [--costs built-in|fitted]
//	bhsim calibrate --host [--runs N] [--save FILE]
//	bhsim clean
//	bhsim web [--addr HOST:PORT]
//	bhsim version [--format text|json]
//
// Each command's --help lists its flags, their defaults and the valid
// values. A mistake in the command line (an unknown thread, kernel, profile,
// format, operation, layout or flag, a value out of range, a malformed
// scenario, trace or generator) prints one line naming what is valid and
// exits with status 2; a failed run exits with status 1. Runs longer than a
// second draw a progress line on stderr when it is a terminal; in a pipe
// they stay quiet, but for explain's and sweep's one-line estimate of a long
// run, and both refuse a run whose estimate passes ten minutes.
//
// The outputs other tools read (the --format csv|json of reproduce, sweep,
// run and validate, profile show, version --format json) are versioned:
// docs/output-schema.md describes every field, bench/report writes them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/internal/gcpolicy"
)

func main() {
	gcpolicy.Apply()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand: its name, what it does, and its implementation,
// which returns a usageError for a mistake in the command line.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are bhsim's subcommands, in the order the usage lists them.
func commands() []command {
	return []command{
		{"reproduce", "the LKML threads: published tables beside the simulated ones", reproduce},
		{"sweep", "a dd scenario over a grid of kernels, block sizes, layouts, bs and CPUs", sweep},
		{"run", "a scenario file on the model or on the host kernel: counters per operation", runCmd},
		{"validate", "every scenario of a directory on the model beside the kernel: one table", validate},
		{"merge", "join the outputs of a sweep or trace run split with --shard K/N", merge},
		{"explain", "one operation's event ledger and simulated time, per resource", explain},
		{"profile", "the hardware profiles that price the events", profileCmd},
		{"calibrate", "--host: fit a profile to this machine's kernel, predict the held-out half", calibrate},
		{"clean", "remove what host runs killed with SIGKILL left behind (as root)", clean},
		{"web", "the teaching page: the model in the browser, on a loopback address", webCmd},
		{"version", "the module version and VCS revision of this binary", version},
	}
}

// usage is the synopsis printed for a missing command and for --help.
func usage() string {
	var sb strings.Builder
	sb.WriteString("usage: bhsim COMMAND [flags] (bhsim COMMAND --help for its flags)\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&sb, "  %-10s %s\n", c.name, c.summary)
	}
	return sb.String()
}

// run executes the command line args and returns the exit status: 0, 1 for
// a failed run, 2 for a mistake in the command line, 130 for Ctrl-C (143
// for SIGTERM), whatever the command.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, strings.SplitN(usage(), "\n", 2)[0]+"\n")
		return 2
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if c.name != args[0] {
			continue
		}
		ctx, stop := report.Interruptible(stderr, "bhsim "+c.name)
		err := c.run(ctx, args[1:], stdout, stderr) // Ctrl-C cancels ctx (report.Interruptible)
		var u usageError
		switch ie := stop(); {
		case ie != nil: // every command alike: one line, 128 + the signal
			fmt.Fprintf(stderr, "bhsim %s: %v\n", c.name, ie)
			return ie.Status()
		case err == nil || errors.Is(err, errHelp):
			return 0
		case errors.As(err, &u):
			fmt.Fprintf(stderr, "bhsim %s: %s\n", c.name, fieldFlags.Replace(u.err.Error()))
			return 2
		case errors.As(err, new(*scenario.BoundError)): // a runner's bound: refused, as a mistake is
			fmt.Fprintf(stderr, "bhsim %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "bhsim %s: %s\n", c.name, fieldFlags.Replace(err.Error()))
			return 1
		}
	}
	if h := args[0]; h == "-h" || h == "-help" || h == "--help" || h == "help" {
		fmt.Fprint(stdout, usage())
		return 0
	}
	fmt.Fprintf(stderr, "bhsim: unknown command %q (valid: %s)\n", args[0], strings.Join(names, ", "))
	return 2
}

// version implements `bhsim version`.
func version(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("version")
	format, check := formatFlag(fs, "text", "json")
	if pos, err := parseArgs(fs, "[--format text|json]\n\nPrints the module version and VCS revision of this binary. A build with -buildvcs=false has none:\ngo build -ldflags \"-X github.com/bhsim/bhsim/bench/report.Version=V -X github.com/bhsim/bhsim/bench/report.Revision=R\"\nsets them (docs/output-schema.md).", args, stdout); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if err := check(); err != nil {
		return err
	}
	t := report.CurrentTool()
	if *format == "json" {
		return report.WriteJSON(stdout, t)
	}
	_, err := fmt.Fprintf(stdout, "%s %s/%s\n", t, runtime.GOOS, runtime.GOARCH)
	return err
}
