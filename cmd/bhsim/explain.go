package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/bench"
)

// explainSynopsis is the first lines of `bhsim explain --help`.
func explainSynopsis() string {
	var sb strings.Builder
	sb.WriteString("OP [--profile NAME] [--fitted] [op flags]\n\n" +
		"Runs one operation on the model and prints its event ledger under a profile:\n" +
		"per resource, count × unit cost = simulated ns. Operations and their flags:\n\n")
	for _, op := range bench.ExplainOps() {
		flags := "(none)"
		if len(op.Args) > 0 {
			flags = "--" + strings.Join(op.Args, ", --")
		}
		fmt.Fprintf(&sb, "  %-20s %s\n  %-20s flags: %s; default profile %s\n", op.Name, op.Summary, "", flags, op.Profile)
	}
	fmt.Fprintf(&sb, "  %-20s %s\n  %-20s flags: --count\n", crashLossOp,
		"what a power cut loses at each moment of dd bs=1M to a Helios4 disk (5.10.10+revert)", "")
	sb.WriteString("\nExample: bhsim explain write-page --bsize 512")
	return sb.String()
}

// explain implements `bhsim explain`.
func explain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("explain")
	profile := fs.String("profile", "", "hardware profile `NAME` (default: the operation's)")
	fitted := fs.Bool("fitted", false, "calibrate the profile first, as its thread does (runs that reproduction: seconds)")
	block := fs.Uint64("block", 1, "find-get-block-*: the `block` looked up (beyond 2^18, on a 32 TiB device)")
	bsize := fs.Uint("bsize", 512, "write-page: the device's block `size`: 512, 1024, 2048 or 4096")
	layout := fs.String("layout", "direct", "write-page: the `device`: "+strings.Join(layoutNames(), ", "))
	bs := fs.String("bs", "4500K", "iomap-write-page: dd's bs= `size` (K, M, G suffixes)")
	kernel := fs.String("kernel", "6.6", "iomap-write-page: the `kernel`: 6.6, 6.6-revert or 6.6-fix")
	count := fs.Uint64("count", 0, "write-page, iomap-write-page: dd's count= (default: 256 MiB worth)")
	pos, status, ok := parseArgs(fs, explainSynopsis(), args, stdout, stderr)
	if !ok {
		return status
	}
	var names []string
	for _, o := range bench.ExplainOps() {
		names = append(names, o.Name)
	}
	names = append(names, crashLossOp)
	if len(pos) != 1 {
		return fail(stderr, "explain", fmt.Errorf("name one operation (valid: %s)", strings.Join(names, ", ")))
	}
	if pos[0] == crashLossOp {
		return explainCrashLoss(fs, *count, stdout, stderr)
	}
	op, err := bench.ExplainOpByName(pos[0])
	if err != nil {
		return fail(stderr, "explain", fmt.Errorf("unknown operation %q (valid: %s)", pos[0], strings.Join(names, ", ")))
	}
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "profile" && f.Name != "fitted" && !slices.Contains(op.Args, f.Name) {
			stray = append(stray, "--"+f.Name)
		}
	})
	if len(stray) > 0 {
		return fail(stderr, "explain", fmt.Errorf("%s does not apply to %s (its flags: --profile, --fitted%s)",
			strings.Join(stray, ", "), op.Name, strings.Join(append([]string{""}, op.Args...), ", --")))
	}
	opArgs := bench.OpArgs{Op: op.Name, Block: *block, Kernel: *kernel, Count: *count, BlockSize: uint32(*bsize)}
	if uint(opArgs.BlockSize) != *bsize {
		opArgs.BlockSize = 1 // out of range: Validate rejects it
	}
	if opArgs.Layout, err = bench.ParseLayout(*layout); err != nil {
		return fail(stderr, "explain", err)
	}
	if opArgs.BS, err = bench.ParseDDSize(*bs); err != nil {
		return fail(stderr, "explain", fmt.Errorf("--bs: %s", strings.TrimPrefix(err.Error(), "bench: ")))
	}
	if err := opArgs.Validate(); err != nil {
		return fail(stderr, "explain", err)
	}
	if *profile == "" {
		*profile = op.Profile
	}
	p, usage, err := fittedProfile(*profile, *fitted)
	if err != nil {
		if usage {
			return fail(stderr, "explain", err)
		}
		fmt.Fprintf(stderr, "bhsim explain: calibrating %s: %v\n", *profile, err)
		return 1
	}
	o, err := bench.BuildOp(opArgs)
	if err != nil {
		fmt.Fprintf(stderr, "bhsim explain: %s\n", strings.TrimPrefix(err.Error(), "bench: "))
		return 1
	}
	costs := "the profile's built-in figures"
	if *fitted {
		costs = "calibrated by the thread measured on that machine"
	}
	fmt.Fprintf(stdout, "%s\n(costs: %s)\n", o.Text(p), costs)
	return 0
}

// crashLossOp is the explain operation that shows what a crash loses.
const crashLossOp = "crash-loss"

// explainCrashLoss runs dd bs=1M count=N (2000 by default) to one Helios4
// disk under the revert and prints, at moments of the run, how much of what
// dd had written a power cut would lose.
func explainCrashLoss(fs *flag.FlagSet, count uint64, stdout, stderr io.Writer) int {
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "count" {
			stray = append(stray, "--"+f.Name)
		}
	})
	if len(stray) > 0 {
		return fail(stderr, "explain", fmt.Errorf("%s does not apply to %s (its flags: --count)", strings.Join(stray, ", "), crashLossOp))
	}
	preset, err := bench.PresetByName("5.10.10+revert")
	if err != nil {
		return fail(stderr, "explain", err)
	}
	d := bench.Helios4DD(bench.LayoutDirect, preset, false)
	if count > 0 {
		d.Count = count
	}
	points, err := bench.CrashLoss(d)
	if err != nil {
		fmt.Fprintf(stderr, "bhsim explain: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: dd if=/dev/zero of=/dev/sda bs=1M count=%d on a Helios4 (5.10.10+revert); "+
		"a power cut keeps only what the disk has written, the page cache is gone. "+
		"Background writeback starts at %d dirty MiB.\n", crashLossOp, d.Count, d.DirtyLimit>>8)
	fmt.Fprint(stdout, bench.CrashLossText(points, max(len(points)/20, 1)))
	return 0
}
