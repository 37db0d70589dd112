package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/workload"
)

// runSynopsis is `bhsim run`'s help text.
const runSynopsis = `[--on model|host] [--kernel NAME] [--runs N] [--format text|csv|json] FILE
       bhsim run [workload flags] TRACE | --gen SPEC [-s SEED] | --step [--quiz [--show]] -s SEED

Runs the scenario in FILE (docs/scenario-language.md) on the model, or with
--on host on this machine's Linux kernel (root, loop devices and tracefs:
a private loop device, tmpfs and tracing instance, all removed afterwards),
and prints per operation and in total the counters both runners derive
(bios, merges, requests, plugs, sectors, page-cache folios, readahead,
writeback errors), each call's result, and on the model its event ledger,
on the host the thread CPU time per call (a measurement, never compared).
--format json writes the result file bhsim validate compares
(docs/output-schema.md).

A workload of one's own — a trace (blkparse, fio iolog, CSV; docs/traces.md),
a seeded generator (--gen), or a scenario with --dist — runs on the model's
--cpus CPUs, interleaved by simulated time, and prints its distributions:
latency per operation kind (p50, p90, p99, p99.9, max), throughput over
simulated time, each resource's busy time, the bh LRU's hit ratio and
miss-ratio curve (--mrc), bios and requests per operation; every header
names the seed and the timing profile. --step prints each operation's cost
and the page cache's state; --quiz hides the answers, --show reveals them;
--step -s SEED alone makes a fresh small problem.`

// runCmd implements `bhsim run`.
func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run")
	on := fs.String("on", "model", "where to run: model, or host (the running kernel; needs root)")
	kernel := fs.String("kernel", "6.18", "the model's kernel `preset` (--on model): "+strings.Join(kernelNames(), ", "))
	runs := fs.Int("runs", 1, "runs on the host, each on a fresh device; counters show min..max (--on host; 1 to "+strconv.Itoa(host.MaxRuns)+")")
	format, check := formatFlag(fs, "text", "csv", "json")
	wf := addWorkloadFlags(fs)
	pos, err := parseArgs(fs, runSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if len(pos) == 1 {
		if fi, err := os.Stat(pos[0]); err == nil && fi.IsDir() {
			return usagef("%s is a directory: run takes one FILE (bhsim validate DIR runs a directory's scenarios)", pos[0])
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if wf.wanted(set) || len(pos) == 1 && !isScenario(pos[0]) {
		if *on != "model" || set["runs"] {
			return usagef("a workload of one's own runs on the model (--on model, no --runs)")
		}
		if err := wf.misplaced(set, pos); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return runWorkload(ctx, wf, pos, *kernel, *format, stdout, stderr)
	}
	if len(pos) != 1 {
		return usagef("want one scenario FILE, got %d arguments", len(pos))
	}

	s, err := workload.ParseFile(pos[0])
	if err != nil {
		return asUsage(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := runOn(ctx, fs, s, *on, *kernel, *runs)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		b, err := r.Encode()
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "csv":
		return resultCSV(stdout, r)
	}
	return resultText(stdout, r)
}

// runOn runs s where on says: on the model of kernel preset name, or on the
// host (runs times). Flags that do not apply to the chosen runner and were
// set are refused.
func runOn(ctx context.Context, fs *flag.FlagSet, s *workload.Scenario, on, kernel string, runs int) (*workload.Result, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch on {
	case "model":
		if set["runs"] {
			return nil, usagef("--runs applies to --on host (the model repeats itself exactly)")
		}
		k, err := workload.KernelByName(kernel)
		if err != nil {
			return nil, asUsage(err)
		}
		return workload.RunModel(ctx, s, workload.ModelOptions{Kernel: k})
	case "host":
		if set["kernel"] {
			return nil, usagef("--kernel applies to --on model (the host runs its own kernel)")
		}
		if runs < 1 || runs > host.MaxRuns {
			return nil, usagef("--runs %d: want 1 to %d", runs, host.MaxRuns)
		}
		if err := host.Check(); err != nil {
			return nil, err
		}
		return host.Run(ctx, s, host.Options{Runs: runs})
	}
	return nil, usagef("unknown --on %q (valid: model, host)", on)
}

// kernelNames lists the kernel presets.
func kernelNames() []string {
	var names []string
	for _, k := range workload.Kernels() {
		names = append(names, k.Name)
	}
	return names
}

// resultText prints a result: a header naming the runner, kernel and
// queue, then each operation with its outcome, counters and ledger, then
// the totals and the fsync results.
func resultText(w io.Writer, r *workload.Result) error {
	ew := &errWriter{w: w}
	ew.printf("scenario %s on the %s (kernel %s, %s", r.Scenario, r.Runner, r.Kernel, r.Machine)
	if r.Runs > 1 {
		ew.printf(", %d runs: ranges are min..max", r.Runs)
	}
	ew.printf(")\n")
	if q := r.Queue; q != nil {
		ew.printf("queue: logical_block_size %d, max_sectors_kb %d, max_segments %d, read_ahead_kb %d, write_cache %s\n",
			q.LogicalBlockSize, q.MaxSectorsKB, q.MaxSegments, q.ReadAheadKB, q.WriteCache)
	}
	for _, l := range strings.Split(r.Pins, "\n") {
		if l != "" {
			ew.printf("# %s\n", l)
		}
	}
	for _, o := range r.Ops {
		ew.printf("\n%d. %s\n   %s\n", o.Index, o.Op, outcome(o))
		wrapCounters(ew, "counters", o.Counters)
		wrapCounters(ew, "ledger", o.Events)
		if o.CPU != nil {
			ew.printf("   cpu      %.0f ns per call (min %d, max %d, sd %.0f, %d calls)\n", o.CPU.MeanNs, o.CPU.MinNs, o.CPU.MaxNs, o.CPU.StddevNs, o.CPU.N)
		}
	}
	ew.printf("\ntotal\n")
	wrapCounters(ew, "counters", r.Total)
	for _, f := range r.Fsyncs {
		ew.printf("fsync at op %d on %s: %s\n", f.Op, f.FD, errnoOrOK(f.Errno))
	}
	if len(r.Varied) > 0 {
		ew.printf("varied between runs: %s\n", strings.Join(r.Varied, ", "))
	}
	return ew.err
}

// outcome is an operation's result line: calls, bytes, errno, block size,
// data read.
func outcome(o workload.OpResult) string {
	parts := []string{fmt.Sprintf("calls %d", o.Calls)}
	if o.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("bytes %d", o.Bytes))
	}
	parts = append(parts, errnoOrOK(o.Errno))
	if o.BlockSize > 0 {
		parts = append(parts, fmt.Sprintf("block size %d", o.BlockSize))
	}
	if o.Data != "" {
		parts = append(parts, "data "+o.Data)
	}
	return strings.Join(parts, ", ")
}

// errnoOrOK is e, or "ok" for success.
func errnoOrOK(e string) string {
	if e == "" {
		return "ok"
	}
	return e
}

// wrapCounters prints cs as "name value" items after a label, comma
// separated and wrapped at 100 columns; nothing for an empty list.
func wrapCounters(ew *errWriter, label string, cs workload.Counters) {
	if len(cs) == 0 {
		return
	}
	line := fmt.Sprintf("   %-8s", label)
	for i, c := range cs {
		item := " " + c.Name + " " + c.ValueString()
		if i < len(cs)-1 {
			item += ","
		}
		if i > 0 && len(line)+len(item) > 100 {
			ew.printf("%s\n", line)
			line = strings.Repeat(" ", 11)
		}
		line += item
	}
	ew.printf("%s\n", line)
}

// resultCSV writes one row per operation result, counter and ledger entry:
// scenario, runner, op (0 for totals), operation, kind (result, counter,
// event, cpu, fsync), name, value ("min..max" for a range).
func resultCSV(w io.Writer, r *workload.Result) error {
	var rows [][]string
	add := func(op int, line, kind, name, value string) {
		rows = append(rows, []string{r.Scenario, r.Runner, strconv.Itoa(op), line, kind, name, value})
	}
	for _, o := range r.Ops {
		add(o.Index, o.Op, "result", "errno", errnoOrOK(o.Errno))
		add(o.Index, o.Op, "result", "calls", strconv.Itoa(o.Calls))
		add(o.Index, o.Op, "result", "bytes", strconv.FormatInt(o.Bytes, 10))
		add(o.Index, o.Op, "result", "block_size", strconv.Itoa(o.BlockSize))
		if o.Data != "" {
			add(o.Index, o.Op, "result", "data", o.Data)
		}
		for _, c := range o.Counters {
			add(o.Index, o.Op, "counter", c.Name, c.ValueString())
		}
		for _, c := range o.Events {
			add(o.Index, o.Op, "event", c.Name, c.ValueString())
		}
		if o.CPU != nil {
			add(o.Index, o.Op, "cpu", "mean_ns", num(o.CPU.MeanNs))
		}
	}
	for _, c := range r.Total {
		add(0, "total", "counter", c.Name, c.ValueString())
	}
	for _, f := range r.Fsyncs {
		add(f.Op, "fsync "+f.FD, "fsync", f.FD, errnoOrOK(f.Errno))
	}
	return writeCSV(w, resultCSVSchema, []string{"scenario", "runner", "op", "operation", "kind", "name", "value"}, rows)
}

// resultCSVSchema names run's CSV layout.
const resultCSVSchema = "bhsim-result-csv/1"

// errWriter keeps the first write error, so that a long print checks once.
type errWriter struct {
	w   io.Writer
	err error
}

// printf writes unless an earlier write failed.
func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
