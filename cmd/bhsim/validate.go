package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/workload"
)

// validateSynopsis is `bhsim validate`'s help text.
const validateSynopsis = `[--on recorded|host] [--recorded DIR] [--runs N] [--kernel NAME] [--rows totals|all|diff] [--format text|json] DIR|FILE...

Runs every scenario (*.scn of each DIR, or each FILE) on the model and sets
it beside the kernel's result: with --on recorded (the default) the result
recorded on Linux 6.18 (NAME.json in --recorded DIR, by default
../kernel/6.18 beside the scenario's directory), with --on host a run on
this machine's kernel (root, loop devices and tracefs; --runs runs each, so
that counters the kernel does not repeat compare as a range). The model
runs over the queue limits the kernel's device had. Prints one table —
scenario, operation, counter or result, model, kernel, equal — and a
summary line; --rows picks the rows (totals: each scenario's summed
counters, its fsync results and every row that differs; all; diff: only
rows that differ). Exits 1 when any row differs.`

// validateSchema names validate's JSON.
const validateSchema = "bhsim-validate/1"

// validateOut is validate's JSON.
type validateOut struct {
	Schema    string          `json:"schema"`
	Tool      toolInfo        `json:"tool"`
	On        string          `json:"on"`
	Kernel    string          `json:"kernel"`
	Model     string          `json:"model_kernel"`
	Summary   summaryOut      `json:"summary"`
	Scenarios []comparisonOut `json:"scenarios"`
}

// summaryOut counts equal rows over every scenario: deterministic rows are
// those whose kernel value repeated over its runs, ranged the others.
type summaryOut struct {
	Scenarios     int `json:"scenarios"`
	Equal         int `json:"equal"`
	Total         int `json:"total"`
	Deterministic int `json:"deterministic"`
	DetEqual      int `json:"deterministic_equal"`
	Ranged        int `json:"ranged"`
	RangedEqual   int `json:"ranged_equal"`
}

// summaryOf renders the summary of n scenarios' comparisons.
func summaryOf(n int, s workload.Summary) summaryOut {
	return summaryOut{Scenarios: n, Equal: s.Equal, Total: s.Total, Deterministic: s.Total - s.Ranged,
		DetEqual: s.Equal - s.RangedEqual, Ranged: s.Ranged, RangedEqual: s.RangedEqual}
}

// comparisonOut is one scenario's rows.
type comparisonOut struct {
	Scenario string   `json:"scenario"`
	Equal    int      `json:"equal"`
	Total    int      `json:"total"`
	Rows     []rowOut `json:"rows"`
}

// rowOut is one compared value.
type rowOut struct {
	Op     int    `json:"op"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Model  string `json:"model"`
	Kernel string `json:"kernel"`
	Equal  bool   `json:"equal"`
}

// validate implements `bhsim validate`.
func validate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate")
	on := fs.String("on", "recorded", "the kernel's side: recorded (results recorded on Linux 6.18) or host (run now; needs root)")
	recorded := fs.String("recorded", "", "directory of recorded results `DIR` (default: ../kernel/6.18 beside each scenario's directory)")
	runs := fs.Int("runs", 3, "runs per scenario on the host (--on host; 1 to "+strconv.Itoa(host.MaxRuns)+")")
	kernel := fs.String("kernel", "6.18", "the model's kernel `preset`: "+strings.Join(kernelNames(), ", "))
	rows := fs.String("rows", "totals", "rows to print: totals, all, diff")
	format, check := formatFlag(fs, "text", "json")
	pos, err := parseArgs(fs, validateSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if *rows != "totals" && *rows != "all" && *rows != "diff" {
		return usagef("unknown --rows %q (valid: totals, all, diff)", *rows)
	}
	k, err := workload.KernelByName(*kernel)
	if err != nil {
		return asUsage(err)
	}
	if len(pos) == 0 {
		return usagef("want at least one scenario DIR or FILE")
	}
	scns, err := scenariosOf(pos)
	if err != nil {
		return asUsage(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var kernelSide func(context.Context, string, *workload.Scenario) (*workload.Result, error)
	switch *on {
	case "recorded":
		if set["runs"] {
			return usagef("--runs applies to --on host (a recording holds the runs it was made with)")
		}
		kernelSide = func(_ context.Context, path string, s *workload.Scenario) (*workload.Result, error) {
			dir := *recorded
			if dir == "" {
				dir = filepath.Join(filepath.Dir(path), "..", "kernel", "6.18")
			}
			r, err := workload.ReadResultFile(filepath.Join(dir, s.Name+".json"))
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: no recorded result in %s (record one with --on host, or give --recorded DIR)", s.Name, dir)
			}
			return r, err
		}
	case "host":
		if set["recorded"] {
			return usagef("--recorded applies to --on recorded")
		}
		if *runs < 1 || *runs > host.MaxRuns {
			return usagef("--runs %d: want 1 to %d", *runs, host.MaxRuns)
		}
		if err := host.Check(); err != nil {
			return err
		}
		kernelSide = func(ctx context.Context, _ string, s *workload.Scenario) (*workload.Result, error) {
			return host.Run(ctx, s, host.Options{Runs: *runs})
		}
	default:
		return usagef("unknown --on %q (valid: recorded, host)", *on)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prog := newProgress(stderr, isTerminal(stderr), "validate", "scenarios")
	advance := prog.task(0)
	out := validateOut{Schema: validateSchema, Tool: tool(), On: *on, Model: k.Name}
	var total workload.Summary
	for i, sp := range scns {
		kr, err := kernelSide(ctx, sp.path, sp.s)
		if err != nil {
			prog.finish()
			return err
		}
		mr, err := workload.RunModel(ctx, sp.s, workload.ModelOptions{Kernel: k, Queue: kr.Queue})
		if err != nil {
			prog.finish()
			return err
		}
		if out.Kernel == "" {
			out.Kernel = kr.Kernel + " " + kr.Machine
		}
		c := workload.Compare(mr, kr)
		total = total.Add(c.Summary())
		out.Scenarios = append(out.Scenarios, comparisonOf(c))
		if advance != nil {
			advance(i+1, len(scns))
		}
	}
	prog.finish()
	out.Summary = summaryOf(len(scns), total)
	if *format == "json" {
		err = writeJSON(stdout, out)
	} else {
		err = validateText(stdout, out, *rows)
	}
	if err != nil {
		return err
	}
	if d := out.Summary.Total - out.Summary.Equal; d > 0 {
		return fmt.Errorf("%d of %d compared values differ (docs/known-differences.md lists the known ones)", d, out.Summary.Total)
	}
	return nil
}

// scenarioPath is a parsed scenario and the file it came from.
type scenarioPath struct {
	path string
	s    *workload.Scenario
}

// scenariosOf parses the scenarios of each argument: every *.scn of a
// directory, or the file itself.
func scenariosOf(args []string) ([]scenarioPath, error) {
	var out []scenarioPath
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		paths := []string{a}
		if st.IsDir() {
			if paths, err = filepath.Glob(filepath.Join(a, "*.scn")); err != nil {
				return nil, err
			}
			if len(paths) == 0 {
				return nil, fmt.Errorf("%s: no *.scn scenario files", a)
			}
		}
		for _, p := range paths {
			s, err := workload.ParseFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, scenarioPath{p, s})
		}
	}
	return out, nil
}

// comparisonOf renders one comparison.
func comparisonOf(c *workload.Comparison) comparisonOut {
	out := comparisonOut{Scenario: c.Scenario}
	for _, r := range c.Rows {
		kind := "counter"
		if r.Kind == workload.RowResult {
			kind = "result"
		}
		out.Rows = append(out.Rows, rowOut{Op: r.Op, Kind: kind, Name: r.Name, Model: r.Model, Kernel: r.Kernel, Equal: r.Equal})
		out.Total++
		if r.Equal {
			out.Equal++
		}
	}
	return out
}

// validateText prints the table of the rows picked and the summary.
func validateText(w io.Writer, v validateOut, rows string) error {
	ew := &errWriter{w: w}
	ew.printf("model (kernel preset %s) beside the kernel (%s, %s)\n\n", v.Model, v.Kernel, v.On)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tew := &errWriter{w: tw}
	tew.printf("scenario\top\tcounter or result\tmodel\tkernel\t\n")
	for _, c := range v.Scenarios {
		for _, r := range c.Rows {
			if !showRow(r, rows) {
				continue
			}
			op, mark := "total", "="
			if r.Op > 0 {
				op = strconv.Itoa(r.Op)
			}
			if !r.Equal {
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
	s := v.Summary
	ew.printf("\n%d of %d values equal over %d scenarios: deterministic %d of %d, ranged %d of %d within the kernel's range\n",
		s.Equal, s.Total, s.Scenarios, s.DetEqual, s.Deterministic, s.RangedEqual, s.Ranged)
	return ew.err
}

// showRow says whether --rows shows r.
func showRow(r rowOut, rows string) bool {
	switch rows {
	case "all":
		return true
	case "diff":
		return !r.Equal
	}
	return !r.Equal || r.Op == 0
}
