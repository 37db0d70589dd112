package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RowKind says what a comparison row compares.
type RowKind int

// The row kinds.
const (
	// RowCounter compares a counter: the model's value (or range) must lie
	// within the kernel's range.
	RowCounter RowKind = iota
	// RowResult compares an operation's outcome as text: errno, calls,
	// bytes, block size or data summary, or a descriptor's fsync results.
	RowResult
)

// Row is one compared item of one scenario.
type Row struct {
	Kind RowKind
	// Op is the operation number from 1, or 0 for the scenario's totals and
	// the per-descriptor fsync rows.
	Op int
	// Name is the counter's name, or for a RowResult "errno", "calls",
	// "bytes", "block_size", "data" or "fsync[FD]".
	Name string
	// Model and Kernel are the two values as text: a counter's value, or
	// "min..max" for a range.
	Model, Kernel string
	// Equal is true when the model's value equals the kernel's or, for a
	// counter the kernel recorded as a range, lies within it.
	Equal bool
	// Ranged is true for a counter the kernel did not repeat over its runs
	// (recorded as min..max); every other row is deterministic.
	Ranged bool
}

// Comparison is a model result beside a kernel result of one scenario.
type Comparison struct {
	Scenario string
	Rows     []Row
	// Times are the scenario's timed values (CompareTime), apart from Rows:
	// they are judged with a tolerance, not for equality.
	Times []TimeRow
}

// Summary counts equal rows: Counters and CounterRows over RowCounter rows
// of the totals (Op 0), Results and ResultRows over every RowResult row,
// Ranged and RangedEqual over the rows whose kernel value is a range, and
// Equal and Total over every row including per-operation counters.
type Summary struct {
	Equal, Total               int
	CountersEqual, CounterRows int
	ResultsEqual, ResultRows   int
	RangedEqual, Ranged        int
}

// Add returns the sum of s and o: the summary of two comparisons together.
func (s Summary) Add(o Summary) Summary {
	return Summary{s.Equal + o.Equal, s.Total + o.Total, s.CountersEqual + o.CountersEqual, s.CounterRows + o.CounterRows,
		s.ResultsEqual + o.ResultsEqual, s.ResultRows + o.ResultRows, s.RangedEqual + o.RangedEqual, s.Ranged + o.Ranged}
}

// String is "N of M equal (totals: counters a of b; results c of d)".
func (s Summary) String() string {
	return fmt.Sprintf("%d of %d equal (total counters %d of %d, results %d of %d)",
		s.Equal, s.Total, s.CountersEqual, s.CounterRows, s.ResultsEqual, s.ResultRows)
}

// Summary counts the comparison's equal rows.
func (c *Comparison) Summary() Summary {
	var s Summary
	for _, r := range c.Rows {
		s.Total++
		if r.Equal {
			s.Equal++
		}
		if r.Ranged {
			s.Ranged++
			if r.Equal {
				s.RangedEqual++
			}
		}
		switch {
		case r.Kind == RowCounter && r.Op == 0:
			s.CounterRows++
			if r.Equal {
				s.CountersEqual++
			}
		case r.Kind == RowResult:
			s.ResultRows++
			if r.Equal {
				s.ResultsEqual++
			}
		}
	}
	return s
}

// Differences is the rows that are not equal.
func (c *Comparison) Differences() []Row {
	var out []Row
	for _, r := range c.Rows {
		if !r.Equal {
			out = append(out, r)
		}
	}
	return out
}

// String prints the summary and one line per row that differs.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", c.Scenario, c.Summary())
	for _, r := range c.Differences() {
		where := "total"
		if r.Op > 0 {
			where = "op " + strconv.Itoa(r.Op)
		}
		fmt.Fprintf(&b, "  %s %s: model %s, kernel %s\n", where, r.Name, r.Model, r.Kernel)
	}
	for _, r := range c.Times {
		if !r.Within {
			fmt.Fprintf(&b, "  time %s\n", r)
		}
	}
	return b.String()
}

// Compare sets a model result beside a kernel result of the same scenario.
// It compares, for the totals and for each operation, every counter either
// result has that matches the report patterns (the kernel's, or the model's
// when the kernel has none); a missing counter counts 0. It then compares
// each operation's errno, calls, bytes, block size and data summary, and
// each descriptor's fsync results. Operations are paired by index; an
// operation one side lacks compares as missing. CPU measurements are not
// compared; elapsed times go to Times (CompareTime). Compare is pure: it changes neither result.
func Compare(model, kernel *Result) *Comparison {
	c := &Comparison{Scenario: kernel.Scenario}
	if c.Scenario == "" {
		c.Scenario = model.Scenario
	}
	report := kernel.Report
	if len(report) == 0 {
		report = model.Report
	}
	c.Rows = append(c.Rows, compareCounters(0, model.Total, kernel.Total, report)...)
	n := max(len(model.Ops), len(kernel.Ops))
	for i := range n {
		var mo, ko OpResult
		mok, kok := i < len(model.Ops), i < len(kernel.Ops)
		if mok {
			mo = model.Ops[i]
		}
		if kok {
			ko = kernel.Ops[i]
		}
		if !mok || !kok || mo.Op != ko.Op {
			c.Rows = append(c.Rows, Row{Kind: RowResult, Op: i + 1, Name: "op", Model: opText(mo, mok), Kernel: opText(ko, kok)})
			continue
		}
		c.Rows = append(c.Rows, compareCounters(i+1, mo.Counters, ko.Counters, report)...)
		for _, f := range []struct{ name, m, k string }{
			{"errno", errnoText(mo.Errno), errnoText(ko.Errno)},
			{"calls", strconv.Itoa(mo.Calls), strconv.Itoa(ko.Calls)},
			{"bytes", strconv.FormatInt(mo.Bytes, 10), strconv.FormatInt(ko.Bytes, 10)},
			{"block_size", strconv.Itoa(mo.BlockSize), strconv.Itoa(ko.BlockSize)},
			{"data", mo.Data, ko.Data},
		} {
			if f.name == "block_size" && mo.BlockSize == 0 && ko.BlockSize == 0 ||
				f.name == "data" && mo.Data == "" && ko.Data == "" ||
				f.name == "bytes" && mo.Bytes == 0 && ko.Bytes == 0 {
				continue
			}
			c.Rows = append(c.Rows, Row{Kind: RowResult, Op: i + 1, Name: f.name, Model: f.m, Kernel: f.k, Equal: f.m == f.k})
		}
	}
	mf, kf := fsyncsByFD(model.Fsyncs), fsyncsByFD(kernel.Fsyncs)
	var fds []string
	for fd := range mf {
		fds = append(fds, fd)
	}
	for fd := range kf {
		if _, ok := mf[fd]; !ok {
			fds = append(fds, fd)
		}
	}
	slices.Sort(fds)
	for _, fd := range fds {
		m, k := strings.Join(mf[fd], ","), strings.Join(kf[fd], ",")
		c.Rows = append(c.Rows, Row{Kind: RowResult, Name: "fsync[" + fd + "]", Model: m, Kernel: k, Equal: m == k})
	}
	c.Times = CompareTime(model, kernel)
	return c
}

// CompareAll pairs model and kernel results by scenario name, in the kernel
// results' order; a scenario one side lacks gives a comparison with one
// unequal row named "missing".
func CompareAll(models, kernels []*Result) []*Comparison {
	byName := map[string]*Result{}
	for _, m := range models {
		byName[m.Scenario] = m
	}
	var out []*Comparison
	seen := map[string]bool{}
	for _, k := range kernels {
		seen[k.Scenario] = true
		m, ok := byName[k.Scenario]
		if !ok {
			out = append(out, &Comparison{Scenario: k.Scenario, Rows: []Row{{Kind: RowResult, Name: "missing", Model: "(no result)", Kernel: "(result)"}}})
			continue
		}
		out = append(out, Compare(m, k))
	}
	for _, m := range models {
		if !seen[m.Scenario] {
			out = append(out, &Comparison{Scenario: m.Scenario, Rows: []Row{{Kind: RowResult, Name: "missing", Model: "(result)", Kernel: "(no result)"}}})
		}
	}
	return out
}

func compareCounters(op int, model, kernel Counters, report []string) []Row {
	names := map[string]bool{}
	for _, cs := range []Counters{model, kernel} {
		for _, c := range cs.Match(report) {
			names[c.Name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.SortFunc(sorted, CompareNames)
	rows := make([]Row, 0, len(sorted))
	for _, n := range sorted {
		m, _ := model.Get(n)
		k, _ := kernel.Get(n)
		rows = append(rows, Row{
			Kind: RowCounter, Op: op, Name: n,
			Model: m.ValueString(), Kernel: k.ValueString(),
			Equal: k.Min <= m.Min && m.Max <= k.Max, Ranged: !k.Exact(),
		})
	}
	return rows
}

func fsyncsByFD(fs []FsyncResult) map[string][]string {
	out := map[string][]string{}
	for _, f := range fs {
		out[f.FD] = append(out[f.FD], errnoText(f.Errno))
	}
	return out
}

func errnoText(e string) string {
	if e == "" {
		return "ok"
	}
	return e
}

func opText(o OpResult, ok bool) string {
	if !ok {
		return "(missing)"
	}
	return o.Op
}
