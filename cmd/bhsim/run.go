package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
)

// runCmd implements `bhsim run`.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run")
	on := fs.String("on", "model", "where to run: model, or host (the running kernel; needs root)")
	kernel := fs.String("kernel", "6.18", "the model's kernel `preset` (--on model): "+strings.Join(engine.KernelNames(), ", "))
	var ho host.Options
	fs.IntVar(&ho.Runs, "runs", 1, "runs on the host, each on a fresh device; counters show min..max (--on host; 1 to "+strconv.Itoa(host.MaxRuns)+")")
	fs.IntVar(&ho.TraceBufferKB, "trace-buffer-kb", 0, "the host's trace buffer per CPU in `KiB` (--on host; default: sized from the scenario's I/O; at most 262144)")
	format, check := formatFlag(fs, "text", "csv", "json")
	wf := addWorkloadFlags(fs)
	pos, err := parseArgs(fs, report.RunHelp, args, stdout)
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
	set := setFlags(fs)
	if firstSet(set, workloadFlagNames) != "" || len(pos) > 0 && !report.IsScenarioFile(pos[0]) {
		if *on != "model" || set["runs"] || set["trace-buffer-kb"] {
			return usagef("a workload of one's own runs on the model (--on model, no --runs)")
		}
		if err := wf.misplaced(set, pos); err != nil {
			return err
		}
		return runWorkload(ctx, wf, pos, *kernel, *format, stdout, stderr)
	}
	if len(pos) != 1 {
		return usagef("want one scenario FILE, got %d arguments", len(pos))
	}
	s, err := scenario.ParseFile(pos[0])
	if err != nil {
		return asUsage(err)
	}
	r, err := runOn(ctx, set, s, *on, *kernel, ho)
	if err != nil {
		return err
	}
	return printAs(stdout, *format, func(w io.Writer) error { return report.WriteResultJSON(w, r) },
		func(w io.Writer) error { return report.WriteResultCSV(w, r) }, func(w io.Writer) error { return report.WriteResultText(w, r) })
}

// runOn runs s where on says: on the model of kernel preset name, or on the
// host with options o. Flags that do not apply to the chosen runner and
// were set (set holds the flags given) are refused.
func runOn(ctx context.Context, set map[string]bool, s *scenario.Scenario, on, kernel string, o host.Options) (*scenario.Result, error) {
	switch on {
	case "model":
		if set["runs"] || set["trace-buffer-kb"] {
			return nil, usagef("--runs and --trace-buffer-kb apply to --on host (the model repeats itself exactly)")
		}
		k, err := engine.KernelByName(kernel)
		if err != nil {
			return nil, asUsage(err)
		}
		return engine.RunModel(ctx, s, engine.ModelOptions{Kernel: k})
	case "host":
		if set["kernel"] {
			return nil, usagef("--kernel applies to --on model (the host runs its own kernel)")
		}
		if err := hostReady(&o); err != nil {
			return nil, err
		}
		return host.Run(ctx, s, o)
	}
	return nil, usagef("unknown --on %q (valid: model, host)", on)
}

// workloadFlags are `bhsim run`'s flags for a workload of one's own: a
// trace or generator on several CPUs, with distributions, step mode and
// charts. The flags that describe the workload and its machine set spec.
type workloadFlags struct {
	spec                   report.WorkloadSpec
	dist, step, quiz, show bool
	plot, shard            string
}

// addWorkloadFlags adds the workload flags to fs.
func addWorkloadFlags(fs *flag.FlagSet) *workloadFlags {
	w := &workloadFlags{spec: report.DefaultWorkloadSpec()}
	s := &w.spec
	fs.StringVar(&s.Gen, "gen", "", "run a seeded generator `SPEC` instead of FILE (docs/traces.md), e.g. random:dev=1G,n=100000,cpus=4,seed=7")
	fs.StringVar(&s.Seed, "s", "", "the generator's `SEED` (overrides the spec's seed=); with --step and no FILE or --gen, a fresh small problem")
	fs.IntVar(&s.CPUs, "cpus", 0, "simulated CPUs the records run on, record r on CPU r.cpu mod N (default: the workload's)")
	fs.IntVar(&s.QueueDepth, "qd", 0, "operations each CPU keeps in flight (default: the workload's, 1)")
	fs.StringVar(&s.Disk, "disk", s.Disk, "the disk `model`: ssd (400 MB/s, 20 µs: Xu Yang's board as assumed), hdd (7200 rpm) or null (no time)")
	fs.StringVar(&s.Access, "access", s.Access, "how records reach the page cache: auto, pagecache (pread/pwrite) or buffers (getblk/bread, the bh LRU)")
	fs.StringVar(&s.Dev, "dev", "", "a trace's device `SIZE` (default: its extent, rounded up to 1M)")
	fs.StringVar(&s.LBS, "lbs", s.LBS, "a trace's or a generator's logical block `SIZE`: 512, 1K, 2K or 4K")
	fs.StringVar(&s.TraceDevice, "trace-dev", "", "the device `MAJ,MIN` of a blkparse trace to replay, when it holds several (default: its first event's)")
	fs.StringVar(&s.TraceFile, "trace-file", "", "the file `NAME` of a fio iolog to replay, when it names several (default: its first)")
	fs.StringVar(&s.Replay, "replay", "", "the blkparse `ACTION` replayed: Q (bios as queued, the default), D (requests as issued), I (inserted) or C (completed)")
	fs.StringVar(&s.TraceFormat, "trace-format", "", "the trace's `FORMAT` (default: told from its content): "+strings.Join(namesOf(source.TraceFormats(), func(f source.TraceFormat) string { return string(f) }), ", "))
	fs.StringVar(&s.CSVColumns, "csv-columns", "", "a CSV trace's `COLUMNS`, by index or header name, with units: time=0:us,op=1,offset=2:sector,length=3 (docs/traces.md)")
	fs.BoolVar(&s.ReplayNoStall, "replay-no-stall", false, "issue a trace's records as fast as the model takes them, ignoring their times (fio's replay_no_stall)")
	fs.StringVar(&s.ReplayTimeScale, "replay-time-scale", "", "a `FACTOR` on the time between a trace's records (2: half the rate), or fio's percentage of the rate (200%)")
	fs.StringVar(&s.Memory, "memory", s.Memory, "the machine's memory `SIZE`: page cache 3/4 of it, writeback from a tenth of that dirty")
	fs.StringVar(&s.Rules, "rules", "", "a trace's or a generator's device `RULES`, as a scenario's device line writes them: wbps=8M riops=200 sched=kyber wbt=off max_bytes=4M strict_limit=1 (docs/scenario-language.md)")
	fs.BoolVar(&s.Data, "data", false, "keep page data (default: a metadata-only device, memory independent of the data)")
	fs.BoolVar(&s.FromZero, "from-zero", false, "each write reads its data from /dev/zero first, as dd if=/dev/zero does a block: one more system call and a clear of its bytes on the writer's CPU and the memory bus")
	fs.BoolVar(&s.ToNull, "to-null", false, "each read writes its data to /dev/null after, as dd of=/dev/null does a block: one more system call on the reader's CPU")
	fs.StringVar(&s.SetBlocksize, "set-blocksize", "", "set the device's block size to `SIZE` once it is open, as BLKBSZSET does (16K: blocks above a page need a 6.15+ kernel)")
	fs.StringVar(&s.Array, "array", "", "make the device an md array of the disk model: `LEVEL:N[:CHUNK]`, as raid6:4 or raid0:4:64K (raid0, raid10n2, raid10f2, raid6; chunk 512K by default)")
	fs.BoolVar(&s.LastClose, "last-close", false, "end the run with the device's last close, as dd's: it writes back what is still dirty and drops the page cache, and the run's time includes it")
	fs.BoolVar(&s.OnePass, "one-pass", false, "read a trace FILE once, as it runs, not first for its CPUs, records and extent: faster, needs --dev, runs on --cpus (default 1); its progress and ten-minute estimate count bytes of the file, not records; not with --mrc or --step")
	fs.BoolVar(&w.dist, "dist", false, "print a scenario FILE's distributions (as for a trace) instead of its per-operation counters")
	fs.BoolVar(&w.step, "step", false, "step mode: after each operation, its cost, bios and the page cache's state")
	fs.BoolVar(&w.quiz, "quiz", false, "with --step: hide the answers (HIT/MISS, cost, bios)")
	fs.BoolVar(&w.show, "show", false, "with --quiz: reveal the answers")
	fs.StringVar(&w.shard, "shard", "", "run shard `K/N` of the TRACE list: those i with i mod N = K (json or csv, for bhsim merge)")
	fs.StringVar(&w.plot, "plot", "", "write a latency CDF and a throughput-over-time chart (SVG and PNG) into `DIR`")
	addCostFlags(fs, "x86-server", false, &s.Costs)
	fs.Var((*listFlag)(&s.MRC), "mrc", "bh LRU `SIZES` for the miss-ratio curve (comma-separated; each reruns the workload), e.g. 1,2,4,8,16,32")
	return w
}

// workloadFlagNames are the names of the flags addWorkloadFlags adds.
var workloadFlagNames = []string{"gen", "s", "cpus", "qd", "disk", "access", "dev", "lbs", "trace-dev", "trace-file", "replay", "trace-format",
	"csv-columns", "replay-no-stall", "replay-time-scale", "memory", "rules", "mrc", "data", "from-zero", "to-null", "last-close", "array", "set-blocksize", "one-pass", "dist", "step", "quiz", "show", "plot", "profile", "cost", "shard"}

// firstSet returns the first of names that set holds, or "".
func firstSet(set map[string]bool, names []string) string {
	for _, n := range names {
		if set[n] {
			return n
		}
	}
	return ""
}

// misplaced refuses a workload flag that would be ignored, or would change
// what a scenario FILE prints without being asked to: a scenario's device is
// its device line, a generator's size its dev=, and a scenario runs as a
// workload only with --dist or --step. set holds the flags given.
func (w *workloadFlags) misplaced(set map[string]bool, pos []string) error {
	scenario := w.spec.Gen == "" && len(pos) == 1 && report.IsScenarioFile(pos[0])
	switch {
	case set["dev"] && w.spec.Gen != "":
		return usagef("--dev is a trace's device size: a generator's is its dev=")
	case scenario && (set["dev"] || set["lbs"] || set["rules"]):
		return usagef("--dev, --lbs and --rules describe a trace's or a generator's device: a scenario's is its device line")
	case firstSet(set, []string{"trace-dev", "trace-file", "replay", "trace-format", "csv-columns"}) != "" && (w.spec.Gen != "" || scenario || len(pos) == 0):
		return usagef("--trace-dev, --trace-file, --replay, --trace-format and --csv-columns choose what of a trace FILE to replay and how to read it")
	case scenario && !w.dist && !w.step && firstSet(set, workloadFlagNames) != "":
		return usagef("--%s applies to a scenario run as a workload: add --dist (its distributions) or --step", firstSet(set, workloadFlagNames))
	}
	return nil
}

// workload builds the workload the flags and positional arguments name.
func (w *workloadFlags) workload(pos []string) (engine.Workload, error) {
	s := w.spec
	if s.Gen == "" && len(pos) == 0 && w.step && s.Seed != "" {
		s.Gen = engine.FreshStepProblem
	}
	switch {
	case s.Gen != "" && len(pos) != 0:
		return engine.Workload{}, usagef("give --gen SPEC or a FILE, not both")
	case s.Gen != "":
	case len(pos) == 0 && (w.quiz || w.show) && !w.step:
		return engine.Workload{}, usagef("--quiz and --show apply to --step (a fresh problem: bhsim run --step --quiz -s SEED)")
	case len(pos) == 0 && s.Seed != "":
		return engine.Workload{}, usagef("-s SEED without a FILE or --gen makes a fresh problem with --step only (bhsim run --step -s %s)", s.Seed)
	case len(pos) != 1:
		return engine.Workload{}, usagef("want one FILE (a trace or scenario), or --gen SPEC, got %d arguments", len(pos))
	case s.Seed != "":
		return engine.Workload{}, usagef("-s applies to a generator (--gen) or a fresh --step problem")
	default:
		s.File = pos[0]
	}
	wl, err := s.Workload()
	return wl, flagError(err)
}

// options builds the run options the flags give, on the model of kernel
// preset name.
func (w *workloadFlags) options(kernel string) (engine.RunOptions, error) {
	s := w.spec
	s.Kernel = kernel
	o, err := s.Options()
	switch {
	case err != nil:
		return o, flagError(err)
	case (w.quiz || w.show) && !w.step:
		return o, usagef("--quiz and --show apply to --step")
	case w.show && !w.quiz:
		return o, usagef("--show reveals --quiz's answers (--step alone shows them)")
	}
	return o, nil
}

// runWorkload implements `bhsim run` for a workload of one's own.
func runWorkload(ctx context.Context, w *workloadFlags, pos []string, kernel, format string, stdout, stderr io.Writer) error {
	if len(pos) > 1 || w.shard != "" {
		return runList(ctx, w, pos, kernel, format, stdout, stderr)
	}
	wl, err := w.workload(pos)
	if err != nil {
		return err
	}
	o, err := w.options(kernel)
	if err != nil {
		return err
	}
	switch {
	case w.step && format != "text":
		return usagef("--step prints text, a block per operation: --format %s applies to a run without --step", format)
	case w.step && w.spec.OnePass:
		return usagef("--step prints a block per operation, up to %d: a trace read in one pass (--one-pass) cannot be counted first; leave out --one-pass", maxStepRecords)
	case w.step && wl.Records > maxStepRecords:
		return usagef("--step prints a block per operation: the workload has %d records, more than %d", wl.Records, maxStepRecords)
	case w.step:
		o.Step = &engine.StepOptions{W: stdout, Quiz: w.quiz, Show: w.show}
	}
	var r *engine.RunResult
	err = budgeted(ctx, stderr, "run", "records", "a smaller n=, or a shorter trace", func(ctx context.Context, progress func(done, total int)) (err error) {
		o.Progress = func(done, total uint64) { progress(int(done), int(total)) }
		r, err = engine.Run(ctx, wl, o)
		return err
	})
	if err != nil {
		return runError(err)
	}
	if w.plot != "" {
		if err := report.WriteRunCharts(w.plot, r); err != nil {
			return err
		}
	}
	if w.step {
		if w.quiz && !w.show {
			_, err = fmt.Fprintf(stdout, "Work out each ?; run again with --show for the answers.\n")
		}
		return err
	}
	return printAs(stdout, format, func(w io.Writer) error { return report.WriteRunJSON(w, r) },
		func(w io.Writer) error { return report.WriteRunCSV(w, r) }, func(w io.Writer) error { return report.WriteRunText(w, r) })
}

// runList implements `bhsim run` over a list of trace files, or a shard of
// it: each file its own run (report.RunFiles), all in one output.
func runList(ctx context.Context, w *workloadFlags, pos []string, kernel, format string, stdout, stderr io.Writer) error {
	if w.step || w.plot != "" || w.dist || w.spec.Gen != "" || w.spec.Seed != "" {
		return usagef("a list of traces runs each as a trace: --step, --plot, --dist, --gen and -s take one workload")
	}
	sh, err := shardOf(w.shard, format)
	if err != nil {
		return err
	}
	o, err := w.options(kernel)
	if err != nil {
		return err
	}
	var l report.RunList
	err = budgeted(ctx, stderr, "run", "traces", "fewer traces, or more shards", func(ctx context.Context, progress func(done, total int)) (err error) {
		l, err = report.RunFiles(ctx, w.spec, o, pos, sh, report.CurrentTool(), progress)
		return err
	})
	if err != nil {
		return runError(err)
	}
	return printAs(stdout, format, jsonOf(l), l.WriteCSV, l.WriteText)
}

// runError is a workload run's error for the exit status: the options, a
// field of the spec and a record of the input are mistakes (status 2), as a
// malformed line is; the rest failures (1).
func runError(err error) error {
	if report.IsInputError(err) || errors.As(err, new(*report.FieldError)) {
		return flagError(err)
	}
	return err
}

// maxStepRecords bounds a step-mode run.
const maxStepRecords = 10000

// hostReady checks --runs and that this machine can run the host runner,
// and leaves Ctrl-C to run(), for a command run --on host.
func hostReady(o *host.Options) error {
	if o.Runs < 1 || o.Runs > host.MaxRuns {
		return usagef("--runs %d: want 1 to %d", o.Runs, host.MaxRuns)
	}
	o.NoSignalHandler = true
	return host.Check()
}
