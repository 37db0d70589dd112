package host

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// A host calibration measures, on the running kernel, the time per call of
// a set of microbenchmarks (CalibrationScenarios), runs the same scenarios
// on the model of that kernel (a ModelRunner: engine.RunModel, the 6.18
// preset) for their event counts, fits a profile's primitive costs to the
// cells of some block sizes and predicts the others. Which time it fits is
// its Clock:
//
//   - ClockWall, the default, is the timing pass's elapsed time
//     (CLOCK_MONOTONIC around an operation's calls, no tracepoints), the
//     time validate compares. Its cells leave out the fsyncs, whose
//     elapsed time is the loop disk's as much as the CPU's.
//   - ClockCPU is the counting pass's thread CPU time
//     (CLOCK_THREAD_CPUTIME_ID around each call) with the runner's
//     tracepoints firing (Options.NoTiming: the timing pass is skipped):
//     the readings' own cost and a system call's are measured
//     (MeasureHarness), the tracepoints' is priced per firing
//     (ParamTracepoint, threadFirings).
//
// On a virtual machine the two part for writes into pages new to the
// cache: on 2026-12-03 (a Firecracker guest) a new-page 4 KiB pwrite took
// 2.9 µs of thread CPU and 3.1–15 µs of elapsed time, the guest's fresh
// memory stalling the write without charging the thread.

// Clock is the time a host calibration fits.
type Clock int

// The clocks of a host calibration.
const (
	// ClockWall fits the untraced elapsed time per call.
	ClockWall Clock = iota
	// ClockCPU fits the traced thread CPU time per call.
	ClockCPU
)

// String is the clock's name on the command line: wall or cpu.
func (c Clock) String() string {
	if c == ClockCPU {
		return "cpu"
	}
	return "wall"
}

// ParseClock reads a Clock's name (String). Errors: any other name.
func ParseClock(name string) (Clock, error) {
	switch name {
	case "wall":
		return ClockWall, nil
	case "cpu":
		return ClockCPU, nil
	}
	return 0, fmt.Errorf("host: clock %q: want wall (untraced elapsed time) or cpu (traced thread CPU time)", name)
}

// what says in a report what the clock measures.
func (c Clock) what() string {
	if c == ClockCPU {
		return "thread CPU time per call, tracepoints on"
	}
	return "elapsed time per call, no tracepoints"
}

// calibrationWrites is how many 4 KiB pwrite(2)s (and preads) one measured
// line makes: 8 MiB, enough calls for a stable mean, well inside the
// scenario bounds.
const calibrationWrites = 2048

// calibrationBigWrite is the size of write-64k's pwrites: sixteen pages a
// call, so that the fit tells a copied byte from a call's fixed cost.
const calibrationBigWrite = 64 << 10

// calibrationOpens is how many open/close pairs, and BLKBSZSET calls, the
// scenarios of those operations make.
const calibrationOpens = 64

// CalibrationBlockSizes are the block sizes the write scenarios run at.
var CalibrationBlockSizes = []int64{512, 1024, 2048, 4096}

// CalibrationScenarios returns the microbenchmarks of a host calibration:
// for each of CalibrationBlockSizes a device written with 4 KiB pwrites —
// once into an empty page cache (folios and buffers created), once more
// while the pages are dirty, fsync (writeback, one bio per buffer), once
// more into clean cached pages and fsync again — and closed, the last
// close throwing its 8 MiB of clean pages and their buffers away
// (kill_bdev); and one scenario each of cached preads, of BLKBSZSET on an
// empty cache, and of open/close pairs of a second descriptor (not the
// last close).
func CalibrationScenarios() []*scenario.Scenario {
	const dev = 64 << 20
	write := func(fill uint8) scenario.Write {
		return scenario.Write{FD: "a", Len: 4096, Repeat: calibrationWrites, Fill: fill}
	}
	var out []*scenario.Scenario
	for _, bs := range CalibrationBlockSizes {
		out = append(out, &scenario.Scenario{
			Name:   fmt.Sprintf("write-bs%d", bs),
			Pins:   fmt.Sprintf("host calibration: 8 MiB of 4 KiB pwrites at block size %d: new, dirty, fsync, clean, fsync", bs),
			Device: scenario.Device{Size: dev, Sector: 512},
			Ops: []scenario.Op{
				scenario.Open{FD: "a", Mode: scenario.ReadWriteMode},
				scenario.SetBlockSize{FD: "a", Size: bs},
				write(0xa1), write(0xa2), scenario.Fsync{FD: "a"}, write(0xa3), scenario.Fsync{FD: "a"},
				scenario.Close{FD: "a"},
			},
		})
	}
	big := scenario.Write{FD: "a", Len: calibrationBigWrite, Repeat: calibrationWrites * 4096 / calibrationBigWrite}
	newBig, dirtyBig := big, big
	newBig.Fill, dirtyBig.Fill = 0xb1, 0xb2
	out = append(out, &scenario.Scenario{
		Name:   "write-64k",
		Pins:   "host calibration: 8 MiB of 64 KiB pwrites at block size 4096: new, dirty, fsync",
		Device: scenario.Device{Size: dev, Sector: 512},
		Ops: []scenario.Op{
			scenario.Open{FD: "a", Mode: scenario.ReadWriteMode},
			newBig, dirtyBig, scenario.Fsync{FD: "a"},
			scenario.Close{FD: "a"},
		},
	})
	out = append(out, &scenario.Scenario{
		Name:   "read-cached",
		Pins:   "host calibration: 8 MiB written and synced, then read back from the page cache in 4 KiB preads",
		Device: scenario.Device{Size: dev, Sector: 512},
		Ops: []scenario.Op{
			scenario.Open{FD: "a", Mode: scenario.ReadWriteMode}, write(0x5a), scenario.Fsync{FD: "a"},
			scenario.Read{FD: "a", Len: 4096, Repeat: calibrationWrites},
			scenario.Close{FD: "a"},
		},
	})
	bsz := &scenario.Scenario{Name: "blkbszset", Pins: "host calibration: BLKBSZSET between 1K and 4K on an empty page cache",
		Device: scenario.Device{Size: dev, Sector: 512}, Ops: []scenario.Op{scenario.Open{FD: "a", Mode: scenario.ReadWriteMode}}}
	for i := range calibrationOpens {
		bsz.Ops = append(bsz.Ops, scenario.SetBlockSize{FD: "a", Size: int64(1024) << (2 * (i % 2))})
	}
	bsz.Ops = append(bsz.Ops, scenario.Close{FD: "a"})
	opens := &scenario.Scenario{Name: "open-close", Pins: "host calibration: open and close of a second descriptor while the first holds the device",
		Device: scenario.Device{Size: dev, Sector: 512}, Ops: []scenario.Op{scenario.Open{FD: "a", Mode: scenario.ReadWriteMode}}}
	for range calibrationOpens {
		opens.Ops = append(opens.Ops, scenario.Open{FD: "b", Mode: scenario.ReadOnlyMode}, scenario.Close{FD: "b"})
	}
	opens.Ops = append(opens.Ops, scenario.Close{FD: "a"})
	return append(out, bsz, opens)
}

// HostFit is the fit of a host calibration on clock c: the cells of the
// scenarios at block sizes 512, 1024 and 2048, of write-64k and of
// open/close are fitted; the 4096-byte scenario, the cached reads and
// BLKBSZSET are predicted (one block size left out; with three fitted
// block sizes a VM's noise in one cell does not decide a cost alone). The
// costs it frees: a copied byte, a new folio, a device file's open and
// release, a read or write call's fixed part (write-64k's sixteen pages a
// call tell it from the copy); on ClockCPU a firing of the runner's
// tracepoints; on ClockWall, whose cells hold the last close, a freed
// folio and a freed buffer_head, a new buffer_head, and a folio made
// dirty (the clean cells against the dirty ones). A cost the cells
// would make negative is pinned at 0 (timing.Fit.NonNegative). The timer
// and the system call are not fitted: Measure measures them. Fit.Why
// says why a cost may leave its x86 server prior.
func HostFit(c Clock) timing.Fit {
	f := timing.Fit{Params: []timing.Param{timing.Ev(bufcache.EvCopyByte), timing.Ev(bufcache.EvFolioAlloc),
		timing.Ev(bufcache.EvFileOpen), timing.Ev(bufcache.EvFileRelease), timing.Ev(bufcache.EvRWCall)},
		NonNegative: true}
	ops := []string{"new", "dirty", "fsync 1", "clean", "fsync 2"}
	if c == ClockCPU {
		f.Params = append([]timing.Param{timing.ParamTracepoint}, f.Params...)
	} else {
		f.Params = append(f.Params, timing.Ev(bufcache.EvBHAlloc), timing.Ev(bufcache.EvFolioFree), timing.Ev(bufcache.EvBHFree),
			timing.Ev(bufcache.EvFolioDirty))
		ops = []string{"new", "dirty", "clean", "close"}
	}
	for _, bs := range []int{512, 1024, 2048} {
		for _, op := range ops {
			f.Cells = append(f.Cells, fmt.Sprintf("write-bs%d/%s", bs, op))
		}
	}
	f.Cells = append(f.Cells, "write-64k/new", "write-64k/dirty", "open-close/open", "open-close/close")
	f.Why = map[timing.Param]string{
		timing.Ev(bufcache.EvCopyByte): "the prior is a copy of data L2 holds, and the calibration writes 8 MiB of " +
			"pages new to the cache: the stores stream to DRAM",
		timing.Ev(bufcache.EvFolioAlloc): "the prior is the page allocator's per-CPU fast path; a folio new to the page " +
			"cache is also cold — its struct page, the memory cgroup's counters, and its data, whose first stores the " +
			"copy makes (priced alike for new and cached pages) — and only the cells of new pages count folio-allocs",
		timing.Ev(bufcache.EvFileOpen): "the prior, a bare-metal estimate, is the least certain of the calibration's: " +
			"open(2) is the longest path it times (the path walk, the LSM hooks, the file and block-device operations), " +
			"and a virtual machine's kernel built with speculation mitigations pays for each indirect call and return on it",
	}
	if c == ClockWall {
		f.Why[timing.Ev(bufcache.EvFolioFree)] = "the prior is the per-CPU free list alone; the last close's " +
			"folio also leaves the LRU under the lruvec lock with interrupts off and is uncharged from its " +
			"memory cgroup (folios_put_refs: a fifth of a 4 KiB block's close on 6.18 under perf), and its " +
			"struct page was last written by the loop worker's completion on the other CPU"
		f.Why[timing.Ev(bufcache.EvBHFree)] = "the prior is kmem_cache_free's fast path; a buffer_head freed " +
			"at the last close was allocated long before, so SLUB frees it to a slab that is not the CPU's " +
			"(__slab_free's cmpxchg), and its memory cgroup is uncharged (__memcg_slab_free_hook); the " +
			"discard before it writes a buffer the completion on the other CPU wrote last"
		f.Why[timing.Ev(bufcache.EvFolioDirty)] = "the prior is __folio_mark_dirty's lock, tag and counters on " +
			"data the CPU holds; a folio made dirty again after its writeback was last written by that " +
			"writeback's completion on the other CPU (its flags, its xarray node's tags), and " +
			"folio_account_dirtied updates the memory cgroup's, the node's and the writeback context's counters"
		f.Why[timing.Ev(bufcache.EvBHAlloc)] = "the prior is the per-CPU freelist; a buffer_head is charged to " +
			"the memory cgroup (__GFP_ACCOUNT), and the calibration's 8 MiB of new pages want new slabs"
	}
	return f
}

// hostCell names one measured cell of a scenario: which of its operations
// (by index from 0) it pools.
type hostCell struct {
	column string
	ops    []int
}

// diskBound reports whether a cell of that column is an fsync's, whose
// elapsed time is the loop disk's as much as the CPU's: the wall clock
// neither measures nor fits it.
func diskBound(column string) bool { return strings.HasPrefix(column, "fsync") }

// hostCells returns the measured cells of scenario s (CalibrationScenarios'
// layouts): each write and fsync of a write scenario, the reads, and every
// BLKBSZSET, open or close of the second descriptor pooled.
func hostCells(s *scenario.Scenario) []hostCell {
	switch {
	case strings.HasPrefix(s.Name, "write-bs"):
		return []hostCell{{"new", []int{2}}, {"dirty", []int{3}}, {"fsync 1", []int{4}}, {"clean", []int{5}}, {"fsync 2", []int{6}}, {"close", []int{7}}}
	case s.Name == "write-64k":
		return []hostCell{{"new", []int{1}}, {"dirty", []int{2}}, {"fsync", []int{3}}}
	case s.Name == "read-cached":
		return []hostCell{{"pread", []int{3}}}
	}
	byVerb := map[string]*hostCell{}
	var out []string
	for i, op := range s.Ops {
		switch o := op.(type) {
		case scenario.SetBlockSize:
		case scenario.Open, scenario.Close:
			if o.Descriptor() != "b" {
				continue
			}
		default:
			continue
		}
		v := op.Verb()
		if byVerb[v] == nil {
			byVerb[v] = &hostCell{column: v}
			out = append(out, v)
		}
		byVerb[v].ops = append(byVerb[v].ops, i)
	}
	var cells []hostCell
	for _, v := range out {
		cells = append(cells, *byVerb[v])
	}
	return cells
}

// HostCalibration is what a host calibration measured and fitted.
type HostCalibration struct {
	// Kernel and Machine are the host's uname -r and -m.
	Kernel, Machine string
	// Clock is the time the calibration fitted.
	Clock Clock
	// Harness is the runner's own cost per timed call, measured before the
	// scenarios: the profile's timer and syscalls costs.
	Harness Harness
	// Profile is the fitted profile, named "x86-host".
	Profile *timing.Profile
	// Calibration reports the fit: its parameters and every cell, fitted
	// or predicted, with its error.
	Calibration *timing.Calibration
	// CrossValidation is each fitted cell's leave-one-out error.
	CrossValidation []timing.LeftOut
}

// ModelRunner runs scenario s on the model, its device given the queue
// limits q the kernel's loop device had; engine.RunModel with
// engine.ModelOptions{Queue: q} is the one bhsim uses. Fit takes it
// as an argument so that the host runner depends on the scenario contract,
// not on the model that speaks it.
type ModelRunner func(ctx context.Context, s *scenario.Scenario, q *scenario.QueueLimits) (*scenario.Result, error)

// Measure measures a host calibration on clock c: the runner's timing
// cost (MeasureHarness: the profile's timer and syscalls, not fitted),
// then CalibrationScenarios on the host, opts.Runs times each (each run a
// counting pass and, on ClockWall, a timing pass on fresh devices), keeping
// each cell's time over its calls per run. On ClockWall the fsyncs are
// not measured (their elapsed time is the loop disk's). Errors: the host
// runner's (no root, no loop devices, no tracefs, a failed run) and an
// operation that failed or was not timed (kernelCell).
func Measure(ctx context.Context, c Clock, opts Options) (*CalibrationRecord, error) {
	h, err := MeasureHarness()
	if err != nil {
		return nil, fmt.Errorf("host: calibrate: %w", err)
	}
	runs := max(opts.Runs, 1)
	rec := &CalibrationRecord{Schema: CalibrationSchema, Clock: c.String(), Runs: runs, Harness: h}
	opts.Runs = 1
	// ClockCPU prices the runner's tracepoints per firing (ParamTracepoint,
	// threadFirings): its cells are the counting pass's CPU time, in which
	// they fire, so the timing pass would only take time.
	opts.NoTiming = c == ClockCPU
	for _, s := range CalibrationScenarios() {
		rs := RecordedScenario{Name: s.Name}
		for run := range runs {
			kernel, err := Run(ctx, s, opts)
			if err != nil {
				return nil, fmt.Errorf("host: calibrate: %s on the host: %w", s.Name, err)
			}
			rec.Kernel, rec.Machine = kernel.Kernel, kernel.Machine
			switch {
			case kernel.Queue == nil:
				return nil, fmt.Errorf("host: calibrate: %s on the host: no queue limits", s.Name)
			case rs.Queue == nil:
				rs.Queue = kernel.Queue
			case *rs.Queue != *kernel.Queue:
				return nil, fmt.Errorf("host: calibrate: %s: the loop device's queue limits changed between runs", s.Name)
			}
			i := 0
			for _, hc := range hostCells(s) {
				if c == ClockWall && diskBound(hc.column) {
					continue
				}
				calls, ns, err := kernelCell(s.Name, hc, c, kernel)
				if err != nil {
					return nil, err
				}
				if run == 0 {
					rs.Cells = append(rs.Cells, RecordedCell{Cell: hc.column, Calls: calls})
				} else if rs.Cells[i].Calls != calls {
					return nil, fmt.Errorf("host: calibrate: %s/%s: %d calls in run %d, %d in the first", s.Name, hc.column, calls, run+1, rs.Cells[i].Calls)
				}
				rs.Cells[i].NS = append(rs.Cells[i].NS, ns)
				i++
			}
		}
		rec.Scenarios = append(rec.Scenarios, rs)
	}
	return rec, nil
}

// Fit runs CalibrationScenarios on the model through model, each on the
// queue limits its loop device had, and fits fit's costs of base to the
// recorded time per call (each cell's median over the runs: one run can
// carry a long interruption, a page fault of the runner, an interrupt, a
// migration, which the median of a few does not), on the record's clock
// (HostFit(c) is the fit for it). The fitted profile is base's with the
// measured timer and system call and the fitted costs, named "x86-host".
// Errors: a scenario or cell the record lacks, the model's, the fit's; on
// ClockWall, a fitted fsync cell (its elapsed time is the disk's).
func (r *CalibrationRecord) Fit(ctx context.Context, base *timing.Profile, fit timing.Fit, model ModelRunner) (*HostCalibration, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	c, _ := ParseClock(r.Clock)
	if slices.Contains(fit.Params, timing.ParamTracepoint) != (c == ClockCPU) {
		return nil, fmt.Errorf("host: calibrate: a record of the %s clock wants its own fit (HostFit(%s)): a tracepoint's firing is priced on the cpu clock alone", c, c)
	}
	if c == ClockWall {
		for _, cell := range fit.Cells {
			if _, column, _ := strings.Cut(cell, "/"); diskBound(column) {
				return nil, fmt.Errorf("host: calibrate: cell %s: an fsync's elapsed time holds the loop disk's, which the fit does not price", cell)
			}
		}
	}
	var obs []timing.Observation
	for _, s := range CalibrationScenarios() {
		rs, err := r.scenario(s.Name)
		if err != nil {
			return nil, err
		}
		modelled, err := model(ctx, s, rs.Queue)
		if err != nil {
			return nil, fmt.Errorf("host: calibrate: %s on the model: %w", s.Name, err)
		}
		for _, hc := range hostCells(s) {
			if c == ClockWall && diskBound(hc.column) {
				continue
			}
			i := slices.IndexFunc(rs.Cells, func(rc RecordedCell) bool { return rc.Cell == hc.column })
			if i < 0 {
				return nil, fmt.Errorf("host: calibration record: %s has no cell %s", s.Name, hc.column)
			}
			rc := rs.Cells[i]
			if calls := modelCalls(hc, modelled); calls != rc.Calls {
				return nil, fmt.Errorf("host: calibration record: %s/%s made %d calls, the scenario makes %d (recorded by an older calibration? record it again)", s.Name, hc.column, rc.Calls, calls)
			}
			q, err := modelQuantities(s.Name, hc, c, modelled, rc.Calls)
			if err != nil {
				return nil, err
			}
			obs = append(obs, timing.Observation{Row: s.Name, Column: hc.column, Published: median(slices.Clone(rc.NS)) / float64(rc.Calls), Q: q})
		}
	}
	out := &HostCalibration{Kernel: r.Kernel, Machine: r.Machine, Clock: c, Harness: r.Harness}
	p := *base
	p.Name, p.Description = "x86-host", fmt.Sprintf("this machine's kernel (%s %s), as a host calibration fits %s to its %s", r.Kernel, r.Machine, base.Name, c.what())
	p.Set(timing.ParamTimer, r.Harness.TimerNS, fmt.Sprintf("measured on this host: the CPU time of an empty interval between two "+
		"CLOCK_THREAD_CPUTIME_ID readings, as the runner brackets each call (median of %d rounds of %d)", harnessRounds, harnessCalls))
	p.Set(timing.ParamSyscall, r.Harness.SyscallNS, fmt.Sprintf("measured on this host: a timed getppid(2) through the Go "+
		"runtime's system-call entry, less the empty interval (median of %d rounds of %d)", harnessRounds, harnessCalls))
	fitted, cal, err := timing.Calibrate(&p, fit, obs)
	if err != nil {
		return nil, err
	}
	out.Profile, out.Calibration = fitted, cal
	if out.CrossValidation, err = timing.CrossValidate(&p, fit, obs); err != nil {
		return nil, err
	}
	return out, nil
}

// modelCalls is the system calls cell hc's operations made on the model.
func modelCalls(hc hostCell, model *scenario.Result) int {
	calls := 0
	for _, i := range hc.ops {
		calls += model.Ops[i].Calls
	}
	return calls
}

// median returns the median of v (the middle pair's mean for an even
// count); v is sorted in place and must not be empty.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	return (v[(n-1)/2] + v[n/2]) / 2
}

// kernelCell pools cell hc of scenario name from one host run on clock c:
// the calls its operations made and their time — on ClockCPU the counting
// pass's thread CPU time, on ClockWall the timing pass's elapsed time.
// Errors: an operation that failed, or one the host did not time on c.
func kernelCell(name string, hc hostCell, c Clock, kernel *scenario.Result) (calls int, ns float64, err error) {
	for _, i := range hc.ops {
		k := kernel.Ops[i]
		timed := k.CPU != nil && k.CPU.N > 0 && (c == ClockCPU || k.Wall != nil)
		if k.Errno != "" || !timed {
			return 0, 0, fmt.Errorf("host: calibrate: %s op %d (%s): errno %q, no %s: cannot be a cell", name, i+1, k.Op, k.Errno, c.what())
		}
		if c == ClockCPU {
			ns += k.CPU.MeanNs * float64(k.CPU.N)
		} else {
			ns += float64(k.Wall.MinNs)
		}
		calls += k.CPU.N
	}
	return calls, ns, nil
}

// modelQuantities is cell hc's quantities per call on the model over the
// host's calls: the model's events but the bios' completions, and one
// system call; on ClockCPU also one timed interval and the runner's
// tracepoints that fire in the calling thread (threadFirings of the
// model's counters, which mirror the host's), where the timing pass reads
// no clock per call and fires none. Errors: an operation that failed on
// the model (the kernel's did not: kernelCell), which cannot be a cell.
func modelQuantities(name string, hc hostCell, c Clock, model *scenario.Result, calls int) (timing.Quantities, error) {
	var firings float64
	var ev bufcache.Counters
	for _, i := range hc.ops {
		if m := model.Ops[i]; m.Errno != "" {
			return timing.Quantities{}, fmt.Errorf("host: calibrate: %s op %d (%s): model errno %q: cannot be a cell", name, i+1, m.Op, m.Errno)
		}
		for _, e := range model.Ops[i].Events {
			ev[parseEvent(e.Name)] += e.Max
		}
		firings += threadFirings(model.Ops[i].Counters)
	}
	// A loop device completes its requests, and their bios' end_io, in its
	// worker thread, whose CPU time the calling thread's clock leaves out;
	// the model completes them on the submitting CPU.
	ev[bufcache.EvBioComplete] = 0
	q := timing.PerOp(ev, calls, 0)
	q[timing.ParamSyscall] = 1
	if c == ClockCPU {
		q[timing.ParamTimer] = 1
		q[timing.ParamTracepoint] = firings / float64(calls)
	}
	return q, nil
}

// parseEvent returns the event a model ledger names (RunModel writes only
// bufcache's names).
func parseEvent(name string) bufcache.Event {
	e, err := bufcache.ParseEvent(name)
	if err != nil {
		panic(fmt.Sprintf("host: the model's ledger names an unknown event %q", name))
	}
	return e
}

// Report renders the calibration: the host, the fitted costs against their
// priors, every cell with its error by label (fitted, then the held-out
// predicted half), and the leave-one-out errors.
func (c *HostCalibration) Report() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "host calibration on %s %s (%s)\n", c.Kernel, c.Machine, c.Clock.what())
	fmt.Fprintf(&sb, "  measured: a timed empty interval %.1f ns, a null system call %.1f ns beyond it\n", c.Harness.TimerNS, c.Harness.SyscallNS)
	fmt.Fprintf(&sb, "  %-14s %-10s %12s %12s %8s  %s\n", "scenario", "cell", "host ns", "model ns", "error", "label")
	for _, label := range []timing.Label{timing.LabelFitted, timing.LabelPredicted} {
		for _, cell := range c.Calibration.Cells {
			if cell.Label == label {
				fmt.Fprintf(&sb, "  %-14s %-10s %12.1f %12.1f %+7.1f%%  %s\n", cell.Row, cell.Column, cell.Published, cell.Simulated, 100*cell.RelError(), cell.Label)
			}
		}
	}
	sb.WriteString("\n")
	sb.WriteString(c.Calibration.Report())
	sb.WriteString("leave-one-out:\n")
	for _, l := range c.CrossValidation {
		if l.Why != "" {
			fmt.Fprintf(&sb, "  %s/%s: no fit without it\n", l.Cell.Row, l.Cell.Column)
			continue
		}
		fmt.Fprintf(&sb, "  %s/%s: %+.1f%%\n", l.Cell.Row, l.Cell.Column, 100*l.Cell.RelError())
	}
	return sb.String()
}
