package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
)

// Validation is the model set beside the kernel over a set of scenarios,
// bhsim-validate/1 (`bhsim validate --format json`).
type Validation struct {
	// Schema is ValidateSchema; Tool the binary that wrote it.
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// On is the kernel's side ("recorded", "host"); Kernel its release and
	// machine, as the first scenario's kernel result names them.
	On     string `json:"on"`
	Kernel string `json:"kernel"`
	// Model is the model's kernel preset.
	Model string `json:"model_kernel"`
	// Disks describe the model's loop devices when times are compared,
	// each once, in the order the scenarios first had them: where its
	// figures come from and what they are.
	Disks []string `json:"disks,omitempty"`
	// Prices says what priced the model's CPU work when times are
	// compared: the profile's name and description.
	Prices    string       `json:"prices,omitempty"`
	Summary   Summary      `json:"summary"`
	Scenarios []Comparison `json:"scenarios"`
	// Skipped are the scenarios the kernel's side could not run as
	// written — a device rule its kernel cannot apply
	// (scenario.ErrRuleUnavailable) — with why: not compared, and no
	// difference.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Skipped is a scenario Validate did not compare, and why.
type Skipped struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// Summary counts equal rows over every scenario: deterministic rows are
// those whose kernel value repeated over its runs, ranged the others (the
// model's value must lie in the kernel's min..max). Known counts the rows
// that differ where docs/known-differences.md says a live run can
// (LiveDifferences; on the host only).
type Summary struct {
	Scenarios     int `json:"scenarios"`
	Equal         int `json:"equal"`
	Total         int `json:"total"`
	Deterministic int `json:"deterministic"`
	DetEqual      int `json:"deterministic_equal"`
	Ranged        int `json:"ranged"`
	RangedEqual   int `json:"ranged_equal"`
	Known         int `json:"known"`
	// Timed counts the timed values compared (scenario.CompareTime) and
	// TimedWithin those inside the kernel's widened range; both 0 when
	// no time was compared.
	Timed       int `json:"timed,omitempty"`
	TimedWithin int `json:"timed_within,omitempty"`
}

// SummaryOf renders the summary s of n scenarios' comparisons.
func SummaryOf(n int, s scenario.Summary) Summary {
	return Summary{Scenarios: n, Equal: s.Equal, Total: s.Total, Deterministic: s.Total - s.Ranged,
		DetEqual: s.Equal - s.RangedEqual, Ranged: s.Ranged, RangedEqual: s.RangedEqual}
}

// Differ is the number of rows that differ.
func (s Summary) Differ() int { return s.Total - s.Equal }

// Unexpected is the number of rows that differ and are not known
// differences: what makes `bhsim validate` fail.
func (s Summary) Unexpected() int { return s.Total - s.Equal - s.Known }

// Comparison is one scenario's rows in a Validation.
type Comparison struct {
	Scenario string `json:"scenario"`
	Equal    int    `json:"equal"`
	Total    int    `json:"total"`
	Rows     []Row  `json:"rows"`
	// Times are its timed values, when times were compared.
	Times []TimeRow `json:"times,omitempty"`
}

// TimeRow is one timed value in a Validation: an operation's elapsed time
// (Op from 1) or the scenario's total (Op 0), the model's beside the
// kernel's min..max over Runs runs, and whether it lies within them widened
// by Tolerance; Error is the signed distance from the nearest end.
type TimeRow struct {
	Op        int     `json:"op"`
	Line      string  `json:"line,omitempty"`
	ModelNs   int64   `json:"model_ns"`
	KernelMin int64   `json:"kernel_min_ns"`
	KernelMax int64   `json:"kernel_max_ns"`
	Runs      int     `json:"runs"`
	Tolerance float64 `json:"tolerance"`
	Error     float64 `json:"error"`
	Within    bool    `json:"within"`
}

// Row is one compared value: Op is the operation's number from 1, 0 for
// the totals and fsync results; Kind "counter" or "result"; Model and
// Kernel the values as text ("min..max" for a range).
type Row struct {
	Op     int    `json:"op"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Model  string `json:"model"`
	Kernel string `json:"kernel"`
	Equal  bool   `json:"equal"`
	// Known marks a row that differs where docs/known-differences.md says
	// a live run can (on the host only).
	Known bool `json:"known,omitempty"`
}

// ComparisonOf renders one scenario's comparison. O(rows).
func ComparisonOf(c *scenario.Comparison) Comparison {
	out := Comparison{Scenario: c.Scenario}
	for _, r := range c.Rows {
		kind := "counter"
		if r.Kind == scenario.RowResult {
			kind = "result"
		}
		out.Rows = append(out.Rows, Row{Op: r.Op, Kind: kind, Name: r.Name, Model: r.Model, Kernel: r.Kernel, Equal: r.Equal})
		out.Total++
		if r.Equal {
			out.Equal++
		}
	}
	for _, t := range c.Times {
		out.Times = append(out.Times, TimeRow{Op: t.Op, Line: t.Line, ModelNs: t.ModelNs, KernelMin: t.Kernel.MinNs,
			KernelMax: t.Kernel.MaxNs, Runs: t.Runs, Tolerance: scenario.TimeTolerance(t.Runs), Error: t.Error(), Within: t.Within})
	}
	return out
}

// ScenarioFile is a parsed scenario and the file it came from.
type ScenarioFile struct {
	Path     string
	Scenario *scenario.Scenario
}

// ScenarioFiles parses the scenarios each path names: every *.scn of a
// directory, in name order, or the file itself. Errors: a path that does
// not exist, a directory without *.scn files, a scenario that does not
// parse (scenario.ParseFile's error). O(bytes read).
func ScenarioFiles(paths ...string) ([]ScenarioFile, error) {
	var out []ScenarioFile
	for _, a := range paths {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		files := []string{a}
		if st.IsDir() {
			if files, err = filepath.Glob(filepath.Join(a, "*.scn")); err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.scn scenario files", a)
			}
		}
		for _, p := range files {
			s, err := scenario.ParseFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, ScenarioFile{p, s})
		}
	}
	return out, nil
}

// KernelSide returns the kernel's result of scenario s, parsed from the
// file path: a recording (Recorded) or a run on the host kernel
// (bench/host.Run).
type KernelSide func(ctx context.Context, path string, s *scenario.Scenario) (*scenario.Result, error)

// NoRecordingError is Recorded's error for a scenario with no recorded
// result; it wraps os.ErrNotExist.
type NoRecordingError struct {
	// Scenario is the scenario's name, Dir the directory looked in.
	Scenario, Dir string
}

// Error names the scenario and the directory.
func (e *NoRecordingError) Error() string {
	return fmt.Sprintf("%s: no recorded result in %s", e.Scenario, e.Dir)
}

// Unwrap returns os.ErrNotExist.
func (e *NoRecordingError) Unwrap() error { return os.ErrNotExist }

// Recorded returns the KernelSide of results recorded on Linux 6.18: the
// file NAME.json (NAME the scenario's name) in dir or, when dir is "", in
// the scenario file's directory's own kernel/6.18 when it has one (a
// corpus that carries its recordings, as testdata/timed does), else in
// ../kernel/6.18 beside it (testdata/scenarios beside testdata/kernel).
// Its errors: a *NoRecordingError for a missing file,
// scenario.ReadResultFile's for one that does not decode.
func Recorded(dir string) KernelSide {
	return func(_ context.Context, path string, s *scenario.Scenario) (*scenario.Result, error) {
		d := recordedDir(dir, path)
		r, err := scenario.ReadResultFile(filepath.Join(d, s.Name+".json"))
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NoRecordingError{Scenario: s.Name, Dir: d}
		}
		return r, err
	}
}

// recordedDir is where the recording of the scenario at path is: dir when
// given, else the scenario directory's kernel/6.18, or ../kernel/6.18 beside
// it.
func recordedDir(dir, path string) string {
	if dir != "" {
		return dir
	}
	d := filepath.Join(filepath.Dir(path), "kernel", "6.18")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		d = filepath.Join(filepath.Dir(path), "..", "kernel", "6.18")
	}
	return d
}

// RecordedLoopDisk returns the loop disk measured with the recording of the
// scenario at path (scenario.LoopDiskFile in the directory Recorded(dir)
// reads it from), nil when the recording has none. Errors: the file's.
func RecordedLoopDisk(dir, path string) (*scenario.LoopDisk, error) {
	l, err := scenario.ReadLoopDiskFile(filepath.Join(recordedDir(dir, path), filepath.FromSlash(scenario.LoopDiskFile)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

// DiskSide returns the loop disk the model of the timed scenario at path
// has, kr being the kernel's result it is held to, and a note saying where
// the disk comes from; nil is engine.LoopDisk.
type DiskSide func(ctx context.Context, path string, kr *scenario.Result) (disk *scenario.LoopDisk, note string, err error)

// RecordedDisk returns the DiskSide of recordings in dir (as Recorded
// finds them): each scenario's model has the loop disk measured with its
// own recording (RecordedLoopDisk), read once per recording directory, or
// the built-in one where a recording has none. Errors: the file's, and a
// disk measured on another kernel or machine than the recording
// (scenario.LoopDisk.MatchesResult). Not for concurrent use.
func RecordedDisk(dir string) DiskSide {
	read := map[string]*scenario.LoopDisk{}
	return func(_ context.Context, path string, kr *scenario.Result) (*scenario.LoopDisk, string, error) {
		d := recordedDir(dir, path)
		l, ok := read[d]
		if !ok {
			var err error
			if l, err = RecordedLoopDisk(dir, path); err != nil {
				return nil, "", err
			}
			read[d] = l
		}
		if l == nil {
			return nil, "", nil
		}
		if err := l.MatchesResult(kr); err != nil {
			return nil, "", fmt.Errorf("%s: %w", filepath.Join(d, filepath.FromSlash(scenario.LoopDiskFile)), err)
		}
		return l, "the loop device measured with the recording in " + d, nil
	}
}

// ValidateOptions are Validate's settings.
type ValidateOptions struct {
	// On names the kernel's side for the output ("recorded", "host"). On
	// "host" a differing counter that LiveDifferences lists is known, not
	// unexpected; a recording is held to every value.
	On string
	// Kernel is the model's kernel preset; one with no Name is 6.18.
	Kernel engine.Kernel
	// Tool is the binary the output names (CurrentTool).
	Tool Tool
	// Profile, when not nil, times the model's runs (engine.ModelOptions
	// .Profile) and compares the times of every kernel result that has
	// them (scenario.CompareTime); nil compares counters only.
	Profile *timing.Profile
	// Disk, when not nil, gives the loop device each timed run's model
	// has (engine.LoopDiskModel of its measurement); nil, or a nil disk,
	// is engine.LoopDisk.
	Disk DiskSide
	// Progress, if not nil, is called after each scenario with the number
	// done of all.
	Progress func(done, total int)
}

// Validate runs every scenario of files on the model (engine.RunModel,
// over the queue limits the kernel's device had) and sets it beside the
// kernel's result that kernel returns (scenario.Compare), one scenario
// after another: every row, per scenario and summed. A row that differs is
// no error: the result's Summary.Differ counts them, Summary.Known those
// that are known differences of a live run (opts.On). Errors: the first
// scenario whose kernel side or model run fails, or ctx's. O(scenarios ×
// their runs).
func Validate(ctx context.Context, files []ScenarioFile, kernel KernelSide, opts ValidateOptions) (Validation, error) {
	model := opts.Kernel.Name
	if model == "" {
		model = "6.18"
	}
	out := Validation{Schema: ValidateSchema, Tool: opts.Tool, On: opts.On, Model: model}
	var total scenario.Summary
	var timed scenario.TimeSummary
	known, knownRows := LiveDifferences(), 0
	disks := map[string]bool{}
	for i, f := range files {
		kr, err := kernel(ctx, f.Path, f.Scenario)
		if errors.Is(err, scenario.ErrRuleUnavailable) {
			out.Skipped = append(out.Skipped, Skipped{Scenario: f.Scenario.Name, Reason: err.Error()})
			if opts.Progress != nil {
				opts.Progress(i+1, len(files))
			}
			continue
		}
		if err != nil {
			return out, err
		}
		mo := engine.ModelOptions{Kernel: opts.Kernel, Queue: kr.Queue}
		if kr.Wall != nil && opts.Profile != nil {
			mo.Profile = opts.Profile
			out.Prices = opts.Profile.Name + ": " + opts.Profile.Description
			var l *scenario.LoopDisk
			note := ""
			if opts.Disk != nil {
				if l, note, err = opts.Disk(ctx, f.Path, kr); err != nil {
					return out, err
				}
			}
			if l != nil {
				mo.Disk = engine.LoopDiskModel(l)
				note += ": " + l.String()
			} else {
				d := engine.LoopDisk()
				note = fmt.Sprintf("the built-in loop device (engine.LoopDisk): %.1f µs + %.0f MB/s a request", d.LatencyNS/1e3, d.MBps)
			}
			if !disks[note] {
				disks[note] = true
				out.Disks = append(out.Disks, note)
			}
		}
		mr, err := engine.RunModel(ctx, f.Scenario, mo)
		if err != nil {
			return out, err
		}
		if out.Kernel == "" {
			out.Kernel = kr.Kernel + " " + kr.Machine
		}
		c := scenario.Compare(mr, kr)
		total = total.Add(c.Summary())
		timed = timed.Add(scenario.SummariseTime(c.Times))
		cmp := ComparisonOf(c)
		for j, r := range cmp.Rows {
			if !r.Equal && opts.On == "host" && knownDifference(known, cmp.Scenario, r) {
				cmp.Rows[j].Known = true
				knownRows++
			}
		}
		out.Scenarios = append(out.Scenarios, cmp)
		if opts.Progress != nil {
			opts.Progress(i+1, len(files))
		}
	}
	out.Summary = SummaryOf(len(files)-len(out.Skipped), total)
	out.Summary.Known = knownRows
	out.Summary.Timed, out.Summary.TimedWithin = timed.Total, timed.Within
	return out, nil
}

// Rows chooses the rows Validation.WriteText prints.
type Rows string

// The row choices.
const (
	// RowsTotals prints each scenario's summed counters (op 0), its fsync
	// results and every row that differs.
	RowsTotals Rows = "totals"
	// RowsAll prints every row.
	RowsAll Rows = "all"
	// RowsDiff prints only the rows that differ.
	RowsDiff Rows = "diff"
)

// shows says whether rows shows r; an unknown choice is RowsTotals.
func (rows Rows) shows(r Row) bool {
	switch rows {
	case RowsAll:
		return true
	case RowsDiff:
		return !r.Equal
	}
	return !r.Equal || r.Op == 0
}

// WriteText prints v as `bhsim validate` does: a header, one table of the
// rows chosen (scenario, op, counter or result, model, kernel, = or ≠,
// "≠ known" for a known difference) and the summary line, which counts the
// known differences. The JSON holds every row whatever rows says. Errors: w
// fails. O(rows).
func (v Validation) WriteText(w io.Writer, rows Rows) error {
	ew := &errWriter{w: w}
	ew.printf("model (kernel preset %s) beside the kernel (%s, %s)\n", v.Model, v.Kernel, v.On)
	for _, d := range v.Disks {
		ew.printf("model's disk: %s\n", d)
	}
	if v.Prices != "" {
		ew.printf("model's prices: %s\n", v.Prices)
	}
	ew.printf("\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tew := &errWriter{w: tw}
	tew.printf("scenario\top\tcounter or result\tmodel\tkernel\t\n")
	for _, c := range v.Scenarios {
		for _, r := range c.Rows {
			if !rows.shows(r) {
				continue
			}
			op, mark := "total", "="
			if r.Op > 0 {
				op = strconv.Itoa(r.Op)
			}
			switch {
			case r.Known:
				mark = "≠ known"
			case !r.Equal:
				mark = "≠"
			}
			tew.printf("%s\t%s\t%s\t%s\t%s\t%s\n", c.Scenario, op, r.Name, r.Model, r.Kernel, mark)
		}
	}
	if tew.err == nil {
		tew.err = tw.Flush()
	}
	if tew.err != nil {
		return tew.err
	}
	for _, sk := range v.Skipped {
		ew.printf("\nskipped %s: %s", sk.Scenario, sk.Reason)
	}
	s := v.Summary
	ew.printf("\n%d of %d values equal over %d scenarios: deterministic %d of %d, ranged %d of %d within the kernel's range",
		s.Equal, s.Total, s.Scenarios, s.DetEqual, s.Deterministic, s.RangedEqual, s.Ranged)
	if s.Known > 0 {
		ew.printf("; %d of the %d that differ are known differences a live run can show (docs/known-differences.md)", s.Known, s.Differ())
	}
	ew.printf("\n")
	if s.Timed > 0 {
		v.writeTimes(ew, rows)
	}
	return ew.err
}

// writeTimes prints the timed values rows chooses (all with RowsAll, the
// ones outside the kernel's range otherwise) and the timed summary line.
func (v Validation) writeTimes(ew *errWriter, rows Rows) {
	tw := tabwriter.NewWriter(ew.w, 0, 0, 2, ' ', 0)
	tew := &errWriter{w: tw}
	printed := false
	for _, c := range v.Scenarios {
		for _, t := range c.Times {
			if rows != RowsAll && t.Within {
				continue
			}
			if !printed {
				tew.printf("\nscenario\top\ttime of\tmodel\tkernel (runs)\terror\t\n")
				printed = true
			}
			op, line, mark := "total", "the scenario", "within"
			if t.Op > 0 {
				op, line = strconv.Itoa(t.Op), t.Line
			}
			if !t.Within {
				mark = "outside"
			}
			k := scenario.Span{MinNs: t.KernelMin, MaxNs: t.KernelMax}
			tew.printf("%s\t%s\t%s\t%s\t%s (%d)\t%+.1f %%\t%s\n", c.Scenario, op, line,
				scenario.Span{MinNs: t.ModelNs, MaxNs: t.ModelNs}, k, t.Runs, 100*t.Error, mark)
		}
	}
	if tew.err == nil {
		tew.err = tw.Flush()
	}
	if ew.err == nil {
		ew.err = tew.err
	}
	if printed {
		ew.printf("\n")
	}
	ew.printf("%d of %d timed values within the kernel's min..max over its runs widened by 5 %% (10 %% for a single run)\n",
		v.Summary.TimedWithin, v.Summary.Timed)
}
