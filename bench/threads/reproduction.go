package threads

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/internal/enum"
)

// Thread is one reproduced LKML thread: its name on the command line, what it
// is about, the built-in profile of the machine it was measured on, and how
// to reproduce it.
type Thread struct {
	// Name is the thread's short name ("blocksize").
	Name string
	// Subject says what the thread is about, as a reader would name it.
	Subject string
	// Profile is the name of the built-in timing profile of the machine the
	// thread's figures were measured on.
	Profile string
	run     func(p *timing.Profile, opts Options) (*Reproduction, error)
	// fitsNothing marks a thread whose cells are all predicted: it prices
	// its runs with the profile as given and calibrates no cost of it.
	fitsNothing bool
	// onClock marks a thread whose runs are on the clock: its fit of the
	// built-in profile is recorded with its leave-one-out
	// (calibratedOnClock).
	onClock bool
}

// RecordsFit reports whether the thread reads its built-in profile's fit,
// and that fit's leave-one-out, from a record (fitted/<profile>.json and
// fitted/<profile>.cv.json) rather than fitting as it runs: its runs are on
// the clock, and a fit reruns them at every step (Options.Refit).
func (t Thread) RecordsFit() bool { return t.onClock }

// Calibrates reports whether the thread fits costs of its profile to its
// published cells (its fitted copy, Fitted, is that calibration); the host
// thread fits none.
func (t Thread) Calibrates() bool { return !t.fitsNothing }

// Options tune a reproduction. The zero value runs it at its published size.
type Options struct {
	// Scale shrinks the simulated work (dd's count, writetest's file) for
	// tests: 0 or 1 is the published size; a thread refuses a scale it cannot
	// run at.
	Scale float64
	// Progress, when not nil, is called after each simulated run of the
	// reproduction with the runs done and the total.
	Progress func(done, total int)
	// Refit makes a thread whose runs are on the clock (blocksize, iomap)
	// fit its costs anew, with leave-one-out, where it would read the
	// recorded fit of its built-in profile: several minutes.
	Refit bool
	// CrossValidate makes a fit on the clock from costs other than the
	// built-in profile's run its leave-one-out too: one more fit per
	// fitted cell.
	CrossValidate bool
}

// scale returns o.Scale, 1 for the zero value.
func (o Options) scale() float64 {
	if o.Scale == 0 {
		return 1
	}
	return o.Scale
}

// Reproduction is a thread reproduced on the model: the calibrated profile,
// the published table beside the simulated one, any tables derived from it
// (ratios), the calibration that labels every cell, the thread's own account
// of what the model counted, and the data of its charts.
type Reproduction struct {
	Thread      string
	Profile     *timing.Profile
	Table       timing.Table
	Derived     []timing.Table
	Calibration *timing.Calibration
	// CrossValidation holds each fitted cell as a fit without it predicts it
	// (leave-one-out), in the order the fit names them; empty when no such
	// fit is possible (one parameter per fitted cell), which
	// CrossValidationNote then says.
	CrossValidation     []timing.LeftOut
	CrossValidationNote string
	// Notes is the thread's account of what the model counted, as text.
	Notes   string
	Figures []Figure
	// Today is the thread's measurement on Linux 6.18, predicted (see
	// Today's doc): one figure per published column or call.
	Today []Today
}

// calibrated fits fit's costs of p to obs and returns a Reproduction holding
// the calibrated profile, the calibration, its table and the leave-one-out
// cells, which the thread completes.
func calibrated(p *timing.Profile, fit timing.Fit, obs []timing.Observation, table timing.Table) (*Reproduction, error) {
	fitted, cal, err := timing.Calibrate(p, fit, obs)
	if err != nil {
		return nil, err
	}
	table.Cells = cal.Cells
	r := &Reproduction{Profile: fitted, Calibration: cal, Table: table}
	r.CrossValidation, err = timing.CrossValidate(p, fit, obs)
	if errors.Is(err, timing.ErrNoSpareCell) {
		r.CrossValidationNote, err = err.Error(), nil
	}
	return r, err
}

// CrossValidationText renders the leave-one-out errors, or why there are
// none.
func (r *Reproduction) CrossValidationText() string {
	if len(r.CrossValidation) == 0 {
		return r.CrossValidationNote + "\n"
	}
	var sb strings.Builder
	sb.WriteString("leave-one-out: each fitted cell as a fit without it predicts it\n")
	for _, l := range r.CrossValidation {
		c := l.Cell
		if l.Why != "" {
			fmt.Fprintf(&sb, "  %-40s published %9.2f  no fit without it: %s\n", c.Row+" / "+c.Column, c.Published, l.Why)
			continue
		}
		fmt.Fprintf(&sb, "  %-40s published %9.2f  predicted %9.2f  error %+6.1f%%\n", c.Row+" / "+c.Column, c.Published, c.Simulated, 100*c.RelError())
	}
	return sb.String()
}

// Tables returns the published table and the derived ones.
func (r *Reproduction) Tables() []timing.Table {
	return append([]timing.Table{r.Table}, r.Derived...)
}

// Text renders the reproduction: its header, each table, the calibration's
// report and the notes.
func (r *Reproduction) Text() string {
	var sb strings.Builder
	how := "calibrated"
	if len(r.Calibration.Params) == 0 {
		how = "nothing fitted"
	}
	fmt.Fprintf(&sb, "== %s (profile %s, %s)\n", r.Thread, r.Profile.Name, how)
	for i, t := range r.Tables() {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(t.Text())
	}
	sb.WriteString("\n")
	sb.WriteString(r.Calibration.Report())
	if r.Notes != "" {
		sb.WriteString("\n")
		sb.WriteString(r.Notes)
	}
	if today := r.TodayText(); today != "" {
		sb.WriteString("\n")
		sb.WriteString(today)
	}
	return sb.String()
}

// Figure is one chart of a reproduction: panels side by side, saved as
// <ID>.svg and <ID>.png.
type Figure struct {
	ID     string
	Panels []Panel
}

// Panel is one chart: a bar chart when Categories is set (each series has
// one Y per category), otherwise lines through (X, Y) points.
type Panel struct {
	Title, XLabel, YLabel string
	Categories            []string
	Series                []Series
}

// Series is one set of bars or one line. Published series are the thread's
// figures, drawn light or dashed beside the simulated ones.
type Series struct {
	Name      string
	Published bool
	X, Y      []float64
}

// All returns the reproduced threads, by name.
func All() []Thread {
	return []Thread{
		{Name: "alloc", Subject: "alloc_page_buffers circular list", Profile: "x86-2017", run: runAlloc},
		{Name: "blocksize", Subject: "set_init_blocksize revert", Profile: "helios4", run: runBlocksize, onClock: true},
		{Name: "iomap", Subject: "iomap writes to block devices", Profile: "xu-yang-board", run: runIomap, onClock: true},
		{Name: "lru", Subject: "per-CPU bh LRU", Profile: "x86-server", run: runLRU},
		{Name: "host", Subject: "set_init_blocksize on this machine's kernel", Profile: "x86-server", run: runHost, fitsNothing: true},
	}
}

// Names returns the threads' names, in All's order.
func Names() []string {
	var names []string
	for _, t := range All() {
		names = append(names, t.Name)
	}
	return names
}

// ByName returns the thread called name; the error names the valid ones.
func ByName(name string) (Thread, error) {
	return enum.Find("threads", "thread", All(), func(t Thread) string { return t.Name }, name)
}

// Run reproduces the thread: its simulated runs priced under p (its own
// profile when p is nil), calibrated as the thread's fit says. Errors: an
// invalid scale, a failed run or calibration.
func (t Thread) Run(p *timing.Profile, opts Options) (*Reproduction, error) {
	if p == nil {
		var err error
		if p, err = timing.ProfileByName(t.Profile); err != nil {
			return nil, err
		}
	}
	if !(opts.scale() > 0 && opts.scale() <= 1) {
		return nil, fmt.Errorf("threads: %s: scale %v outside (0, 1]", t.Name, opts.Scale)
	}
	r, err := t.run(p, opts)
	if err != nil {
		return nil, fmt.Errorf("threads: %s: %w", t.Name, err)
	}
	r.Thread = t.Name
	if r.Today, err = todayOf(t.Name, r, opts); err != nil {
		return nil, fmt.Errorf("threads: %s on %s: %w", t.Name, todayKernel, err)
	}
	return r, nil
}

// Calibrated returns the built-in profile called name as the thread measured
// on that machine calibrates it (running that reproduction). Errors: an
// unknown profile, a profile no thread calibrates, a failed reproduction.
func Calibrated(name string, opts Options) (*timing.Profile, error) {
	if _, err := timing.ProfileByName(name); err != nil {
		return nil, err
	}
	for _, t := range All() {
		if t.Profile == name && t.Calibrates() {
			r, err := t.Run(nil, opts)
			if err != nil {
				return nil, err
			}
			return r.Profile, nil
		}
	}
	return nil, fmt.Errorf("threads: no thread calibrates profile %q", name)
}

// derivedLabel is the label of a figure computed from cells with labels:
// the least independent of them.
func derivedLabel(labels ...timing.Label) timing.Label {
	order := timing.Labels()
	best := len(order) - 1
	for _, l := range labels {
		for i, o := range order {
			if o == l && i < best {
				best = i
			}
		}
	}
	return order[best]
}
