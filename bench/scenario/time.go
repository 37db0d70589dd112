package scenario

import (
	"fmt"
	"time"
)

// Span is an elapsed time over one or more runs, in nanoseconds: the least
// and the most the runs took. On the kernel it is wall-clock time
// (CLOCK_MONOTONIC) measured in a pass without tracepoints; on the model it
// is simulated time, one value (MinNs == MaxNs).
type Span struct {
	MinNs int64 `json:"min_ns"`
	MaxNs int64 `json:"max_ns"`
}

// SpanOf is the span of one run that took d.
func SpanOf(d time.Duration) *Span { return &Span{MinNs: int64(d), MaxNs: int64(d)} }

// String is "12.3ms" for one value, "12.3ms..13.1ms" for a range.
func (s Span) String() string {
	if s.MinNs == s.MaxNs {
		return fmtNs(float64(s.MinNs))
	}
	return fmtNs(float64(s.MinNs)) + ".." + fmtNs(float64(s.MaxNs))
}

// mergeSpans is the span covering every non-nil span of spans, nil when
// there is none.
func mergeSpans(spans ...*Span) *Span {
	var out *Span
	for _, s := range spans {
		switch {
		case s == nil:
		case out == nil:
			c := *s
			out = &c
		default:
			out.MinNs, out.MaxNs = min(out.MinNs, s.MinNs), max(out.MaxNs, s.MaxNs)
		}
	}
	return out
}

// TimedFloor is the shortest time that counts as a timed value: an
// operation (or a scenario's total) is compared in time when the kernel's
// slowest run or the model took at least this long. Shorter operations —
// an open, an ioctl, a cached pwrite — take a few microseconds on the
// kernel, where scheduling noise is as large as the operation; their CPU
// time is what calibrate fits.
const TimedFloor = time.Millisecond

// TimeTolerance is how far the kernel's range is widened before the model's
// time must lie inside it: 5 % over two or more runs, 10 % for a single run
// (whose range is one value).
func TimeTolerance(runs int) float64 {
	if runs >= 2 {
		return 0.05
	}
	return 0.10
}

// TimeRow is one timed value of one scenario: an operation's elapsed time,
// or the scenario's total, on the model and on the kernel.
type TimeRow struct {
	// Op is the operation number from 1, or 0 for the scenario's total.
	Op int
	// Line is the operation's canonical line ("" for the total).
	Line string
	// ModelNs is the model's simulated time.
	ModelNs int64
	// Kernel is the kernel's range over its runs, Runs their number.
	Kernel Span
	Runs   int
	// Lo and Hi are the kernel's range widened by TimeTolerance(Runs).
	Lo, Hi float64
	// Within is true when Lo ≤ ModelNs ≤ Hi.
	Within bool
}

// Error is the model's signed relative difference from the nearest end of
// the kernel's range, 0 inside it: +0.12 is 12 % slower than the kernel's
// slowest run.
func (r TimeRow) Error() float64 {
	m := float64(r.ModelNs)
	switch {
	case m > float64(r.Kernel.MaxNs):
		return m/float64(r.Kernel.MaxNs) - 1
	case m < float64(r.Kernel.MinNs):
		return m/float64(r.Kernel.MinNs) - 1
	}
	return 0
}

// String is one line: "op 5 fsync a: model 52.1ms, kernel 50.3ms..51.0ms
// (+2.2 %)".
func (r TimeRow) String() string {
	where := "total"
	if r.Op > 0 {
		where = fmt.Sprintf("op %d %s", r.Op, r.Line)
	}
	return fmt.Sprintf("%s: model %s, kernel %s (%+.1f %%)", where, fmtNs(float64(r.ModelNs)), r.Kernel, 100*r.Error())
}

// CompareTime sets the model's elapsed times beside the kernel's: each
// operation both results timed and the scenario's total, keeping those
// where the kernel's slowest run or the model took at least TimedFloor. It
// returns nil when either result has no times. Operations are paired by
// index and line, as Compare pairs them.
func CompareTime(model, kernel *Result) []TimeRow {
	var rows []TimeRow
	add := func(op int, line string, m, k *Span) {
		if m == nil || k == nil || max(m.MaxNs, k.MaxNs) < int64(TimedFloor) {
			return
		}
		runs := max(kernel.Runs, 1)
		tol := TimeTolerance(runs)
		r := TimeRow{Op: op, Line: line, ModelNs: m.MaxNs, Kernel: *k, Runs: runs,
			Lo: float64(k.MinNs) * (1 - tol), Hi: float64(k.MaxNs) * (1 + tol)}
		r.Within = float64(r.ModelNs) >= r.Lo && float64(r.ModelNs) <= r.Hi
		rows = append(rows, r)
	}
	for i := range min(len(model.Ops), len(kernel.Ops)) {
		mo, ko := model.Ops[i], kernel.Ops[i]
		if mo.Op == ko.Op {
			add(i+1, mo.Op, mo.Wall, ko.Wall)
		}
	}
	add(0, "", model.Wall, kernel.Wall)
	return rows
}

// TimeSummary counts timed values within the kernel's widened range.
type TimeSummary struct{ Within, Total int }

// Add returns the sum of s and o.
func (s TimeSummary) Add(o TimeSummary) TimeSummary {
	return TimeSummary{s.Within + o.Within, s.Total + o.Total}
}

// SummariseTime counts rows within.
func SummariseTime(rows []TimeRow) TimeSummary {
	s := TimeSummary{Total: len(rows)}
	for _, r := range rows {
		if r.Within {
			s.Within++
		}
	}
	return s
}

// fmtNs prints a time in ns with a unit chosen for it: 812ns, 41.2µs,
// 12.3ms, 1.52s.
func fmtNs(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.1fms", ns/1e6)
	}
	return fmt.Sprintf("%.2fs", ns/1e9)
}
