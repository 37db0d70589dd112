package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/blocksize"
)

// workloadFlags are `bhsim run`'s flags for a workload of one's own: a
// trace or generator on several CPUs, with distributions, step mode and
// charts.
type workloadFlags struct {
	gen        *string
	seed       *string
	cpus, qd   *int
	disk       *string
	access     *string
	dev, lbs   *string
	traceDev   *string
	traceFile  *string
	replay     *string
	memory     *string
	mrc        listFlag
	data       *bool
	dist       *bool
	step, quiz *bool
	show       *bool
	plot       *string
	costs      *costFlags
}

// addWorkloadFlags adds the workload flags to fs.
func addWorkloadFlags(fs *flag.FlagSet) *workloadFlags {
	w := &workloadFlags{
		gen:       fs.String("gen", "", "run a seeded generator `SPEC` instead of FILE (docs/traces.md), e.g. random:dev=1G,n=100000,cpus=4,seed=7"),
		seed:      fs.String("s", "", "the generator's `SEED` (overrides the spec's seed=); with --step and no FILE or --gen, a fresh small problem"),
		cpus:      fs.Int("cpus", 0, "simulated CPUs the records run on, record r on CPU r.cpu mod N (default: the workload's)"),
		qd:        fs.Int("qd", 0, "operations each CPU keeps in flight (default: the workload's, 1)"),
		disk:      fs.String("disk", "ssd", "the disk `model`: ssd (400 MB/s, 20 µs: Xu Yang's board as assumed), hdd (7200 rpm) or null (no time)"),
		access:    fs.String("access", "auto", "how records reach the page cache: auto, pagecache (pread/pwrite) or buffers (getblk/bread, the bh LRU)"),
		dev:       fs.String("dev", "", "a trace's device `SIZE` (default: its extent, rounded up to 1M)"),
		lbs:       fs.String("lbs", "512", "a trace's or a generator's logical block `SIZE`: 512, 1K, 2K or 4K"),
		traceDev:  fs.String("trace-dev", "", "the device `MAJ,MIN` of a blkparse trace to replay, when it holds several (default: its first event's)"),
		traceFile: fs.String("trace-file", "", "the file `NAME` of a fio iolog to replay, when it names several (default: its first)"),
		replay:    fs.String("replay", "", "the blkparse `ACTION` replayed: Q (bios as queued, the default), D (requests as issued), I (inserted) or C (completed)"),
		memory:    fs.String("memory", "2G", "the machine's memory `SIZE`: page cache 3/4 of it, writeback from a tenth dirty"),
		data:      fs.Bool("data", false, "keep page data (default: a metadata-only device, memory independent of the data)"),
		dist:      fs.Bool("dist", false, "print a scenario FILE's distributions (as for a trace) instead of its per-operation counters"),
		step:      fs.Bool("step", false, "step mode: after each operation, its cost, bios and the page cache's state"),
		quiz:      fs.Bool("quiz", false, "with --step: hide the answers (HIT/MISS, cost, bios)"),
		show:      fs.Bool("show", false, "with --quiz: reveal the answers"),
		plot:      fs.String("plot", "", "write a latency CDF and a throughput-over-time chart (SVG and PNG) into `DIR`"),
		costs:     addCostFlags(fs, "x86-server", false),
	}
	fs.Var(&w.mrc, "mrc", "bh LRU `SIZES` for the miss-ratio curve (comma-separated; each reruns the workload), e.g. 1,2,4,8,16,32")
	return w
}

// workloadFlagNames are the names of the flags addWorkloadFlags adds.
var workloadFlagNames = []string{"gen", "s", "cpus", "qd", "disk", "access", "dev", "lbs", "trace-dev", "trace-file", "replay",
	"memory", "mrc", "data", "dist", "step", "quiz", "show", "plot", "profile", "cost"}

// wanted reports whether a workload flag was set.
func (w *workloadFlags) wanted(set map[string]bool) bool {
	for _, n := range workloadFlagNames {
		if set[n] {
			return true
		}
	}
	return false
}

// misplaced refuses a workload flag that would be ignored, or would change
// what a scenario FILE prints without being asked to: a scenario's device is
// its device line, a generator's size its dev=, and a scenario runs as a
// workload only with --dist or --step. set holds the flags given.
func (w *workloadFlags) misplaced(set map[string]bool, pos []string) error {
	scenario := *w.gen == "" && len(pos) == 1 && isScenario(pos[0])
	switch {
	case set["dev"] && *w.gen != "":
		return usagef("--dev is a trace's device size: a generator's is its dev=")
	case scenario && (set["dev"] || set["lbs"]):
		return usagef("--dev and --lbs describe a trace's or a generator's device: a scenario's is its device line")
	case (set["trace-dev"] || set["trace-file"] || set["replay"]) && (*w.gen != "" || scenario || len(pos) == 0):
		return usagef("--trace-dev, --trace-file and --replay choose what of a blkparse or fio trace FILE to replay")
	}
	if !scenario || *w.dist || *w.step {
		return nil
	}
	for _, n := range workloadFlagNames {
		if set[n] {
			return usagef("--%s applies to a scenario run as a workload: add --dist (its distributions) or --step", n)
		}
	}
	return nil
}

// freshProblem is the generator of --step -s SEED without a FILE: a small
// seeded class problem of reads, writes and syncs on two CPUs.
const freshProblem = "random:dev=64K,n=8,size=512-4K,sizestep=512,reads=0.3,fsync=3,cpus=2"

// workload builds the workload the flags and positional arguments name.
func (w *workloadFlags) workload(pos []string) (workload.Workload, error) {
	spec := *w.gen
	if spec == "" && len(pos) == 0 && *w.step && *w.seed != "" {
		spec = freshProblem
	}
	if spec != "" {
		if len(pos) != 0 {
			return workload.Workload{}, usagef("give --gen SPEC or a FILE, not both")
		}
		g, err := workload.ParseGenerator(spec)
		if err != nil {
			return workload.Workload{}, asUsage(err)
		}
		if *w.seed != "" {
			s, err := strconv.ParseUint(*w.seed, 10, 64)
			if err != nil {
				return workload.Workload{}, usagef("-s %q: want a decimal seed", *w.seed)
			}
			g = g.WithSeed(s)
		}
		gw, err := workload.GenWorkload(g)
		if err != nil {
			return gw, asUsage(err)
		}
		gw.LogicalBlockSize, err = w.logicalBlockSize()
		return gw, err
	}
	if len(pos) != 1 {
		switch {
		case len(pos) == 0 && (*w.quiz || *w.show) && !*w.step:
			return workload.Workload{}, usagef("--quiz and --show apply to --step (a fresh problem: bhsim run --step --quiz -s SEED)")
		case len(pos) == 0 && *w.seed != "":
			return workload.Workload{}, usagef("-s SEED without a FILE or --gen makes a fresh problem with --step only (bhsim run --step -s %s)", *w.seed)
		}
		return workload.Workload{}, usagef("want one FILE (a trace or scenario), or --gen SPEC, got %d arguments", len(pos))
	}
	if *w.seed != "" {
		return workload.Workload{}, usagef("-s applies to a generator (--gen) or a fresh --step problem")
	}
	var dev workload.TraceDevice
	if *w.dev != "" {
		n, err := workload.ParseDDSize(*w.dev)
		if err != nil {
			return workload.Workload{}, usagef("--dev %q: %v", *w.dev, err)
		}
		dev.Size = n
	}
	lbs, err := w.logicalBlockSize()
	if err != nil {
		return workload.Workload{}, err
	}
	dev.LogicalBlockSize = lbs
	dev.Select = workload.TraceSelect{Device: *w.traceDev, File: *w.traceFile}
	switch a := *w.replay; a {
	case "": // Q, the reader's default
	case "Q", "D", "I", "C":
		dev.Select.Action = workload.BlkparseAction(a[0])
	default:
		return workload.Workload{}, usagef("--replay %q: want Q, D, I or C", a)
	}
	tw, err := workload.TraceWorkload(pos[0], dev)
	return tw, asUsage(err)
}

// logicalBlockSize is --lbs: a power of two from 512 to a page.
func (w *workloadFlags) logicalBlockSize() (uint32, error) {
	lbs, err := workload.ParseDDSize(*w.lbs)
	if err == nil && (lbs > 1<<12 || blocksize.ValidateLogical(uint32(lbs), 1<<12) != nil) {
		err = errors.New("not a power of two from 512 to 4K (a logical block is at most a page)")
	}
	if err != nil {
		return 0, usagef("--lbs %q: %v", *w.lbs, err)
	}
	return uint32(lbs), nil
}

// options builds the run options the flags give.
func (w *workloadFlags) options(kernel string) (workload.RunOptions, error) {
	var o workload.RunOptions
	k, err := workload.KernelByName(kernel)
	if err != nil {
		return o, asUsage(err)
	}
	p, costs, err := w.costs.resolve("x86-server")
	if err != nil {
		return o, err
	}
	d, err := workload.DiskByName(*w.disk)
	if err != nil {
		return o, asUsage(err)
	}
	a, err := workload.ParseAccess(*w.access)
	if err != nil {
		return o, asUsage(err)
	}
	mem, err := workload.ParseDDSize(*w.memory)
	if err != nil {
		return o, usagef("--memory %q: %v", *w.memory, err)
	}
	o = workload.RunOptions{Kernel: k, Profile: p, ProfileCosts: costs, Disk: d, CPUs: *w.cpus, QueueDepth: *w.qd, Access: a, MemoryBytes: mem, Data: *w.data}
	for _, s := range w.mrc {
		n, err := strconv.Atoi(s)
		if err != nil {
			return o, usagef("--mrc %q: want LRU sizes such as 1,2,4,8,16", s)
		}
		o.MRCSizes = append(o.MRCSizes, n)
	}
	if (*w.quiz || *w.show) && !*w.step {
		return o, usagef("--quiz and --show apply to --step")
	}
	if *w.show && !*w.quiz {
		return o, usagef("--show reveals --quiz's answers (--step alone shows them)")
	}
	return o, nil
}

// runWorkload implements `bhsim run` for a workload of one's own.
func runWorkload(ctx context.Context, w *workloadFlags, pos []string, kernel, format string, stdout, stderr io.Writer) error {
	wl, err := w.workload(pos)
	if err != nil {
		return err
	}
	o, err := w.options(kernel)
	if err != nil {
		return err
	}
	if *w.step && format != "text" {
		return usagef("--step prints text, a block per operation: --format %s applies to a run without --step", format)
	}
	if *w.step {
		if wl.Records > maxStepRecords {
			return usagef("--step prints a block per operation: the workload has %d records, more than %d", wl.Records, maxStepRecords)
		}
		o.Step = &workload.StepOptions{W: stdout, Quiz: *w.quiz, Show: *w.show}
	}
	prog := newProgress(stderr, isTerminal(stderr) && !*w.step, "run", "records")
	if cb := prog.task(0); cb != nil {
		o.Progress = func(done, total uint64) { cb(int(done), int(total)) }
	}
	r, err := workload.Run(ctx, wl, o)
	prog.finish()
	var bad *workload.TraceError
	if errors.Is(err, workload.ErrRunOptions) || errors.As(err, &bad) && (bad.Err == nil || errors.Is(bad.Err, workload.ErrNoRecords)) {
		return asUsage(err) // the options, or a record of the input (as a malformed line is)
	}
	if err != nil {
		return err
	}
	if *w.plot != "" {
		if err := writeRunCharts(*w.plot, r); err != nil {
			return err
		}
	}
	if *w.step {
		if *w.quiz && !*w.show {
			_, err = fmt.Fprintf(stdout, "Work out each ?; run again with --show for the answers.\n")
		}
		return err
	}
	switch format {
	case "json":
		return writeJSON(stdout, r)
	case "csv":
		return distCSV(stdout, r)
	}
	return distText(stdout, r)
}

// maxStepRecords bounds a step-mode run.
const maxStepRecords = 10000

// isScenario reports whether FILE is a scenario (by content or extension).
func isScenario(path string) bool {
	t, err := workload.OpenTrace(path)
	if err != nil {
		return strings.HasSuffix(path, ".scn")
	}
	defer t.Close()
	return t.Format == workload.TraceScenario
}
