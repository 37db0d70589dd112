package timing

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/exp/stats"
	"gonum.org/v1/gonum/mat"
)

// Observation is one published figure and the work the model did for it.
// Either Q holds the quantity of each parameter per operation (events per op,
// and timed calls per op for the harness) and the simulated figure is their
// priced sum in nanoseconds; or Loads lists the demand of every resource of a
// streaming run (see Load) and the simulated time is the busiest one's; or
// Clock runs it on the engine's clock (a dd: ClockRun). When
// Bytes is positive the figure is a throughput, Bytes moved per simulated
// time in decimal MB/s (dd's unit); otherwise it is the time in nanoseconds.
type Observation struct {
	Row, Column string
	Published   float64
	Q           Quantities
	Loads       []Load
	Bytes       float64
	// Run names the simulated run the figure comes from: cells with the same
	// non-empty Run share one simulation, so a cell that shares the run of a
	// fitted cell is not an independent prediction (LabelShared).
	Run string
	// Input marks a cell whose simulated figure echoes a model input that was
	// itself taken from the published table (LabelInput).
	Input bool
	// Clock, when set, simulates the observation on the engine's clock:
	// its time under a profile is a run's (Q and Loads are then not
	// priced). Observations with the same Run share one run per
	// profile. A calibration's observations all have one or none do.
	Clock ClockRun
}

// Key returns the name a Fit gives the observation: "row/column".
func (o *Observation) Key() string { return o.Row + "/" + o.Column }

// Fit names what a calibration fits: the costs it is free to change and the
// published cells, by Observation.Key, it fits them to. Every other cell is
// reported, labelled by how it relates to the fit.
type Fit struct {
	Params []Param
	Cells  []string
	// Why says, for a parameter whose fitted cost may end more than
	// PriorFactor from its prior, why the prior does not hold: the work
	// the fit absorbs that the model does not count. The report and the
	// fitted profile's source carry it.
	Why map[Param]string
	// NonNegative pins at 0 a cost the least-squares solution makes
	// negative and fits the others again, one cost at a time (the active
	// set of Lawson and Hanson's non-negative least squares), where
	// without it a negative cost is an error. FittedParam.Pinned marks a
	// pinned cost: the cells ask less of it than the other costs explain.
	NonNegative bool
	// Progress, when set, is called after each run of a fit on the clock
	// with the runs so far (their total depends on how fast it converges).
	Progress func(runs int)
}

// PriorFactor is how far a fitted cost may move from its documented prior,
// either way, before the calibration flags it: beyond it, the fit is
// absorbing work the model does not count, and the thread must say which
// (Fit.Why).
const PriorFactor = 3.0

// Label says how a cell's simulated figure relates to the published table.
type Label string

// The labels of a calibrated cell. Only LabelPredicted is a prediction: no
// input of its simulation came from a published cell.
const (
	// LabelFitted is a cell the calibration fitted.
	LabelFitted Label = "fitted"
	// LabelShared is a cell whose simulated value comes from the same
	// simulated run as a fitted cell.
	LabelShared Label = "fitted (shared run)"
	// LabelInput is a cell that echoes a model input taken from the table.
	LabelInput Label = "input"
	// LabelPredicted is a cell no input of whose simulation came from a
	// published cell.
	LabelPredicted Label = "predicted"
)

// Labels returns the labels in the order reports list them.
func Labels() []Label { return []Label{LabelFitted, LabelShared, LabelInput, LabelPredicted} }

// binding returns the load that sets o's simulated time under p: the busiest
// of o.Loads, or o.Q as a single load.
func (p *Profile) binding(o *Observation) Load {
	if len(o.Loads) == 0 {
		return Load{Name: "cpu", Q: o.Q, Servers: 1}
	}
	i, _ := p.Bottleneck(o.Loads)
	return o.Loads[i]
}

// SimNSOf returns o's simulated time in nanoseconds under p, for a priced
// observation (not one on the clock).
func (p *Profile) SimNSOf(o Observation) float64 {
	switch {
	case len(o.Loads) == 0:
		l := p.binding(&o)
		return p.BusyNS(&l)
	}
	_, t := p.Bottleneck(o.Loads)
	return t
}

// Simulate returns o's simulated figure under p, in the unit of Published:
// nanoseconds, or MB/s when o.Bytes is positive.
func (p *Profile) Simulate(o Observation) float64 {
	t := p.SimNSOf(o)
	if o.Bytes > 0 {
		return o.Bytes * 1e3 / t
	}
	return t
}

// targetNS is the time o's published figure stands for.
func (o *Observation) targetNS() float64 {
	if o.Bytes > 0 {
		return o.Bytes * 1e3 / o.Published
	}
	return o.Published
}

// Calibration is the report of a fit: which parameters moved, from what to
// what, and every cell's error with its label.
type Calibration struct {
	Profile string
	Params  []FittedParam
	Cells   []Cell
	// DOF is the number of fitted cells minus the number of fitted parameters.
	DOF int
}

// FittedParam is one calibrated cost.
type FittedParam struct {
	Param         Param
	Before, After float64
	PriorSource   string
	// Why is the thread's reason for a cost beyond PriorFactor of its prior
	// (Fit.Why), or empty.
	Why string
	// Pinned marks a cost Fit.NonNegative held at 0.
	Pinned bool
}

// WithinPrior reports whether the fitted cost is within PriorFactor of its
// prior, either way (a zero prior holds only a zero cost).
func (fp FittedParam) WithinPrior() bool {
	if fp.Before == 0 {
		return fp.After == 0
	}
	r := fp.After / fp.Before
	return r <= PriorFactor && r >= 1/PriorFactor
}

// Calibrate fits the costs fit.Params to the observations fit.Cells names by
// least squares on relative errors. Observations on the clock
// (Observation.Clock) are fitted by Gauss–Newton rounds of runs
// (fitClock); priced ones — linear (simulated time is linear in
// every cost at an idle memory bus), then, for a profile with a memory-stall
// share or fitted observations in phases, Gauss–Newton steps from there (a
// CPU's time then depends on the bus's cost through its load; a run in
// phases adds bottlenecks that change with the costs) — keeping every other
// cost of p, and returns
// the fitted copy of p with the report. Each cell of the report is labelled:
// fitted, fitted (shared run) when it shares its Run with a fitted cell,
// input when the observation says so, or predicted.
//
// Errors: no observations; as many parameters as observations or more (the
// project's rule: fewer parameters than cells); a fitted cell that names no
// observation; fewer fitted observations than parameters; a repeated or
// unknown parameter, or the memory-stall share (not a cost); a singular
// system (a parameter that no fitted observation exercises, or two that they
// cannot tell apart); a fitted cost that comes out negative (the model
// cannot explain the data with those parameters). Cost: a few
// least-squares solves of len(fit.Cells) × len(fit.Params), and under a
// share up to maxRefineRounds Gauss–Newton steps of len(fit.Params)+1 simulations of
// each fitted cell. On the clock: up to maxClockRounds rounds of
// len(fit.Params)+1 runs of each fitted run, then one run of every run for
// the report. A fit on the clock refuses NonNegative.
func Calibrate(p *Profile, fit Fit, obs []Observation) (*Profile, *Calibration, error) {
	fitted, pinned, sims, chosen, err := fitOnly(p, fit, obs)
	if err != nil {
		return nil, nil, err
	}
	if err := negativeCost(fitted, fit.Params); err != nil {
		return nil, nil, err
	}
	rows := strings.Join(fit.Cells, ", ")
	for _, q := range fit.Params {
		fitted.Source[q] = fmt.Sprintf("fitted to %s (prior %.3g ns: %s)", rows, p.NS[q], p.Source[q])
		if pinned[q] {
			fitted.Source[q] = fmt.Sprintf("pinned at 0 by a fit to %s, which asked for a negative cost (prior %.3g ns: %s)", rows, p.NS[q], p.Source[q])
		}
		if why := fit.Why[q]; !(FittedParam{Before: p.NS[q], After: fitted.NS[q]}).WithinPrior() && why != "" {
			fitted.Source[q] += "; beyond its prior because " + why
		}
	}
	cal, err := report(p, fitted, fit, obs, chosen, sims)
	if err != nil {
		return nil, nil, err
	}
	return fitted, cal, nil
}

// fitOnly is Calibrate's fit: the fitted costs, the costs pinned at 0,
// the runner of clocked observations (nil for priced ones) and which
// observations it fitted.
func fitOnly(p *Profile, fit Fit, obs []Observation) (*Profile, map[Param]bool, *clockSims, []bool, error) {
	chosen, err := fit.select_(obs)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	onClock, err := clocked(obs)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if !onClock {
		fitted, pinned, err := fitNonNegative(p, fit, obs, chosen)
		return fitted, pinned, nil, chosen, err
	}
	if fit.NonNegative {
		return nil, nil, nil, nil, errClockNonNegative
	}
	sims := &clockSims{obs: obs, progress: fit.Progress}
	fitted, err := fitClock(p, fit.Params, sims, chosen)
	return fitted, map[Param]bool{}, sims, chosen, err
}

// Reported returns the report of a calibration made before: fitted is
// what Calibrate(prior, fit, obs) returned (a recorded copy of it), and
// every cell is simulated under it (observations on the clock are run,
// in parallel) and labelled as Calibrate labels it. A cost fit.NonNegative
// left at 0 is reported pinned. Errors: Calibrate's checks of fit and obs;
// a run's.
func Reported(prior, fitted *Profile, fit Fit, obs []Observation) (*Calibration, error) {
	chosen, err := fit.select_(obs)
	if err != nil {
		return nil, err
	}
	onClock, err := clocked(obs)
	if err != nil {
		return nil, err
	}
	var sims *clockSims
	if onClock {
		sims = &clockSims{obs: obs, progress: fit.Progress}
	}
	return report(prior, fitted, fit, obs, chosen, sims)
}

// report is the calibration report of fitted, fitted from prior to the
// chosen observations: each parameter's move and each cell, simulated
// under fitted (by sims when the observations run on the clock) and
// labelled.
func report(prior, fitted *Profile, fit Fit, obs []Observation, chosen []bool, sims *clockSims) (*Calibration, error) {
	cal := &Calibration{Profile: prior.Name, DOF: len(fit.Cells) - len(fit.Params)}
	for _, q := range fit.Params {
		pinned := fit.NonNegative && fitted.NS[q] == 0 && prior.NS[q] != 0
		cal.Params = append(cal.Params, FittedParam{Param: q, Before: prior.NS[q], After: fitted.NS[q],
			PriorSource: prior.Source[q], Why: fit.Why[q], Pinned: pinned})
	}
	simulated := make([]float64, len(obs))
	if sims != nil {
		all := make([]int, len(obs))
		for i := range all {
			all[i] = i
		}
		figs, err := sims.figures([]*Profile{fitted}, all)
		if err != nil {
			return nil, err
		}
		simulated = figs[0]
	} else {
		for i, o := range obs {
			simulated[i] = fitted.Simulate(o)
		}
	}
	fittedRuns := map[string]bool{}
	for i, o := range obs {
		if chosen[i] && o.Run != "" {
			fittedRuns[o.Run] = true
		}
	}
	for i, o := range obs {
		label := LabelPredicted
		switch {
		case chosen[i]:
			label = LabelFitted
		case o.Run != "" && fittedRuns[o.Run]:
			label = LabelShared
		case o.Input:
			label = LabelInput
		}
		cal.Cells = append(cal.Cells, Cell{Row: o.Row, Column: o.Column, Published: o.Published,
			Simulated: simulated[i], Label: label})
	}
	return cal, nil
}

// negativeCost is the error of a fit that leaves one of params negative:
// the model cannot explain the data with them.
func negativeCost(fitted *Profile, params []Param) error {
	for _, q := range params {
		if fitted.NS[q] < 0 {
			return fmt.Errorf("timing: calibrate: %s comes out negative (%.3g ns): the model cannot fit the data with these parameters", q, fitted.NS[q])
		}
	}
	return nil
}

// select_ checks f against obs and returns which observations it fits.
func (f Fit) select_(obs []Observation) ([]bool, error) {
	switch {
	case len(obs) == 0:
		return nil, errors.New("timing: calibrate: no observations")
	case len(f.Params) >= len(obs):
		return nil, fmt.Errorf("timing: calibrate: %d parameters for %d cells: need fewer parameters than cells", len(f.Params), len(obs))
	case len(f.Cells) < len(f.Params):
		return nil, fmt.Errorf("timing: calibrate: %d fitted cells cannot determine %d parameters", len(f.Cells), len(f.Params))
	}
	seen := map[Param]bool{}
	for _, q := range f.Params {
		if q < 0 || int(q) >= NumParams {
			return nil, fmt.Errorf("timing: calibrate: unknown parameter %d", q)
		}
		if q == ParamMemStall {
			return nil, fmt.Errorf("timing: calibrate: %s is a share that shapes how the others combine, not a cost a fit can move", q)
		}
		if seen[q] {
			return nil, fmt.Errorf("timing: calibrate: parameter %s given twice", q)
		}
		seen[q] = true
	}
	chosen := make([]bool, len(obs))
	for _, key := range f.Cells {
		i := slices.IndexFunc(obs, func(o Observation) bool { return o.Key() == key })
		if i < 0 {
			return nil, fmt.Errorf("timing: calibrate: fitted cell %q names no observation", key)
		}
		if chosen[i] {
			return nil, fmt.Errorf("timing: calibrate: cell %q given twice", key)
		}
		chosen[i] = true
	}
	return chosen, nil
}

// ErrNoSpareCell is CrossValidate's error for a fit with no cell to spare:
// as many fitted cells as parameters, so that none can be left out.
var ErrNoSpareCell = errors.New("timing: no leave-one-out: no fitted cell to spare")

// LeftOut is one fitted cell as a fit without it predicts it: the cell with
// that prediction as its Simulated figure, or, when the other cells cannot
// determine the fit (a parameter only this cell exercises), Why says so and
// Cell.Simulated is 0.
type LeftOut struct {
	Cell Cell
	Why  string
}

// CrossValidate returns, for each cell fit.Cells names, in that order, the
// cell as a fit without it predicts it (leave-one-out): the honest error of
// a fitted cell. Each fit starts from p's costs, as the full fit does:
// started from the full fit's, a fit on the clock could stop where the
// left-out cell put it. Errors: those of Calibrate's checks of the fit;
// ErrNoSpareCell for a fit with as many fitted cells as parameters.
func CrossValidate(p *Profile, fit Fit, obs []Observation) ([]LeftOut, error) {
	if _, err := fit.select_(obs); err != nil {
		return nil, err
	}
	if len(fit.Cells) <= len(fit.Params) {
		return nil, fmt.Errorf("%w: %d parameter(s) for %d fitted cell(s)", ErrNoSpareCell, len(fit.Params), len(fit.Cells))
	}
	var out []LeftOut
	for i, key := range fit.Cells {
		o := obs[slices.IndexFunc(obs, func(o Observation) bool { return o.Key() == key })]
		c := Cell{Row: o.Row, Column: o.Column, Published: o.Published, Label: LabelPredicted}
		rest := fit
		rest.Cells = slices.Delete(slices.Clone(fit.Cells), i, i+1)
		fitted, _, _, _, err := fitOnly(p, rest, obs)
		if err == nil {
			err = negativeCost(fitted, fit.Params)
		}
		if err != nil {
			out = append(out, LeftOut{Cell: c, Why: err.Error()})
			continue
		}
		if o.Clock != nil {
			t, err := o.Clock(fitted)
			if err != nil {
				return nil, fmt.Errorf("timing: run %s: %w", runName(&o), err)
			}
			c.Simulated = o.figure(t)
		} else {
			c.Simulated = fitted.Simulate(o)
		}
		out = append(out, LeftOut{Cell: c})
	}
	return out, nil
}

// fitNonNegative is fitCosts of fit.Params; with fit.NonNegative, while
// some cost comes out negative the most negative is pinned at 0 and the
// others are fitted again. It returns the fit and the pinned costs.
// Errors: fitCosts', and every cost pinned.
func fitNonNegative(p *Profile, fit Fit, obs []Observation, chosen []bool) (*Profile, map[Param]bool, error) {
	free, base := fit.Params, *p
	pinned := map[Param]bool{}
	for {
		fitted, err := fitCosts(&base, free, obs, chosen)
		if err != nil || !fit.NonNegative {
			return fitted, pinned, err
		}
		worst := -1
		for i, q := range free {
			if fitted.NS[q] < 0 && (worst < 0 || fitted.NS[q] < fitted.NS[free[worst]]) {
				worst = i
			}
		}
		if worst < 0 {
			return fitted, pinned, nil
		}
		q := free[worst]
		pinned[q], base.NS[q] = true, 0
		if free = slices.Delete(slices.Clone(free), worst, worst+1); len(free) == 0 {
			return nil, nil, fmt.Errorf("timing: calibrate %v: every cost comes out negative", fit.Params)
		}
	}
}

// maxFitRounds bounds the rounds of fitCosts' active-set iteration.
const maxFitRounds = 50

// singularCond is the condition number of the weighted design matrix above
// which a fit is refused as singular.
const singularCond = 1e12

// fitCosts returns a copy of p with the costs in params fitted to the
// chosen observations. Simulated time is linear in every cost within one
// resource, so with the resource that binds each cell known the fit is linear
// least squares on relative errors (each row weighted by 1/target, so a slow
// cell counts as much as a fast one), solved by QR. Which resource binds
// depends on the costs: starting from p's, fitCosts solves, re-derives the
// binding resources under the new costs and solves again, until they no
// longer change (or maxFitRounds; it keeps the best round by the sum of
// squared relative errors). A cell bound by a resource with no free parameter
// (a disk) contributes an all-zero row: it is reported but cannot move a cost.
func fitCosts(p *Profile, params []Param, obs []Observation, chosen []bool) (*Profile, error) {
	cur := *p
	best, bestErr := (*Profile)(nil), math.Inf(1)
	prev := ""
	nfit := 0
	for _, c := range chosen {
		if c {
			nfit++
		}
	}
	k := len(params)
	a := mat.NewDense(nfit, k, nil)
	b := mat.NewVecDense(nfit, nil)
	for range maxFitRounds {
		var sig strings.Builder
		row := 0
		for i := range obs {
			if !chosen[i] {
				continue
			}
			o := &obs[i]
			l := cur.fitBinding(o, params)
			sig.WriteString(l.Name + ";")
			fixed := cur
			for _, q := range params {
				fixed.NS[q] = 0
			}
			w := 1 / o.targetNS()
			servers := max(l.Servers, 1)
			for j, q := range params {
				a.Set(row, j, l.Q[q]/servers*w)
			}
			b.SetVec(row, (o.targetNS()-fixed.BusyNS(&l))*w)
			row++
		}
		x, err := leastSquares(a, b)
		if err != nil {
			return nil, fmt.Errorf("timing: calibrate %v: %w", params, err)
		}
		for i, q := range params {
			cur.NS[q] = x[i]
		}
		if e := cur.fitError(obs, chosen); e < bestErr {
			cp := cur
			best, bestErr = &cp, e
		}
		if sig.String() == prev {
			break
		}
		prev = sig.String()
	}
	if best.NS[ParamMemStall] > 0 {
		return refine(best, params, obs, chosen), nil
	}
	return best, nil
}

// maxRefineRounds bounds refine's Gauss–Newton steps.
const maxRefineRounds = 30

// refine improves a fit whose simulated times are not linear in the costs:
// under a memory-stall share a CPU's time depends on the memory bus's cost
// through the bus's load (Contended), and a run in phases takes the sum of
// several bottlenecks, so the linear solve of fitCosts, which prices each
// cell's binding load at an idle bus, is only a start. refine
// takes Gauss–Newton steps on the chosen cells' relative errors, with a
// forward-difference Jacobian, halving a step that does not lower the sum of
// squared errors, and returns the best costs it reached (p itself when no
// step helps).
func refine(p *Profile, params []Param, obs []Observation, chosen []bool) *Profile {
	var rows []int
	for i, c := range chosen {
		if c {
			rows = append(rows, i)
		}
	}
	residuals := func(q *Profile) []float64 {
		r := make([]float64, len(rows))
		for j, i := range rows {
			r[j] = q.Simulate(obs[i])/obs[i].Published - 1
		}
		return r
	}
	cur := *p
	curErr := cur.fitError(obs, chosen)
	for range maxRefineRounds {
		r := residuals(&cur)
		a := mat.NewDense(len(rows), len(params), nil)
		for j, q := range params {
			h := max(1e-6*math.Abs(cur.NS[q]), 1e-9)
			step := cur
			step.NS[q] += h
			for k, rk := range residuals(&step) {
				a.Set(k, j, (rk-r[k])/h)
			}
		}
		b := mat.NewVecDense(len(rows), nil)
		for k := range r {
			b.SetVec(k, -r[k])
		}
		dx, err := leastSquares(a, b)
		if err != nil {
			break
		}
		improved := false
		for scale := 1.0; scale > 1e-3; scale /= 2 {
			next := cur
			for j, q := range params {
				next.NS[q] += scale * dx[j]
			}
			if e := next.fitError(obs, chosen); e < curErr {
				cur, curErr, improved = next, e, true
				break
			}
		}
		if !improved {
			break
		}
	}
	return &cur
}

// leastSquares returns the x minimising ‖a x − b‖ by a QR factorisation of a
// (rows ≥ columns). Errors: a singular system.
func leastSquares(a *mat.Dense, b *mat.VecDense) ([]float64, error) {
	return leastSquaresCond(a, b, singularCond)
}

// leastSquaresCond is leastSquares refusing a system whose condition
// number is not below cond.
func leastSquaresCond(a *mat.Dense, b *mat.VecDense, cond float64) ([]float64, error) {
	var qr mat.QR
	qr.Factorize(a)
	if c := qr.Cond(); !(c < cond) {
		return nil, errors.New("singular system: a parameter is not exercised by the fitted cells, or two are indistinguishable")
	}
	var x mat.VecDense
	if err := qr.SolveVecTo(&x, false, b); err != nil {
		return nil, fmt.Errorf("singular system: %w", err)
	}
	return x.RawVector().Data, nil
}

// busiestWith returns the index of the busiest of loads under p that does
// any of params, or -1.
func (p *Profile) busiestWith(loads []Load, params []Param) int {
	best, t := -1, 0.0
	for i := range loads {
		if b := p.BusyNS(&loads[i]); hasParam(&loads[i], params) && (best < 0 || b > t) {
			best, t = i, b
		}
	}
	return best
}

// fitBinding is the load a fit round charges o's published time to: the
// bottleneck under p, unless that load has no free parameter (a disk) and is
// faster than the published figure — then the figure can only be explained
// by raising another resource, the busiest one with a free parameter.
func (p *Profile) fitBinding(o *Observation, params []Param) Load {
	l := p.binding(o)
	if hasParam(&l, params) || p.BusyNS(&l) >= o.targetNS() {
		return l
	}
	best := p.busiestWith(o.Loads, params)
	if best < 0 {
		return l
	}
	return o.Loads[best]
}

// hasParam reports whether l does any of params.
func hasParam(l *Load, params []Param) bool {
	for _, q := range params {
		if l.Q[q] != 0 {
			return true
		}
	}
	return false
}

// fitError is the sum of squared relative errors of the chosen cells under p.
func (p *Profile) fitError(obs []Observation, chosen []bool) float64 {
	e := 0.0
	for i, o := range obs {
		if chosen[i] {
			d := p.Simulate(o)/o.Published - 1
			e += d * d
		}
	}
	return e
}

// Report renders the calibration: parameters with their prior values and
// sources, then every cell with its error, grouped by label, and a summary of
// the absolute errors of each group.
func (c *Calibration) Report() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "calibration of profile %s: %d parameter(s) fitted, %d degree(s) of freedom\n", c.Profile, len(c.Params), c.DOF)
	for _, fp := range c.Params {
		fmt.Fprintf(&sb, "  %-14s %8.2f ns (prior %.2f ns, ×%.2f: %s)\n", fp.Param, fp.After, fp.Before, fp.After/fp.Before, fp.PriorSource)
		switch {
		case fp.Pinned:
			fmt.Fprintf(&sb, "    pinned at 0: the fitted cells ask for a negative cost, less than the other costs already explain\n")
		case fp.WithinPrior():
		case fp.Why != "":
			fmt.Fprintf(&sb, "    beyond %g× of its prior because %s\n", PriorFactor, fp.Why)
		default:
			fmt.Fprintf(&sb, "    beyond %g× of its prior, and the thread gives no reason: the model misses work this cost absorbs\n", PriorFactor)
		}
	}
	fmt.Fprintf(&sb, "  cells: %s\n", c.LabelCounts())
	for _, label := range Labels() {
		var errs []float64
		for _, cell := range c.Cells {
			if cell.Label == label {
				errs = append(errs, math.Abs(100*cell.RelError()))
			}
		}
		if len(errs) > 0 {
			q := stats.Quantiles(errs, 0.5, 1)
			fmt.Fprintf(&sb, "  %s cells: %d, mean |error| %.1f%%, median %.1f%%, max %.1f%%\n",
				label, len(errs), stats.Mean(errs), q[0], q[1])
		}
	}
	return sb.String()
}

// LabelCounts renders how many cells carry each label, in Labels' order:
// "11 fitted, 18 fitted (shared run), 0 input, 11 predicted".
func (c *Calibration) LabelCounts() string {
	var parts []string
	for _, label := range Labels() {
		n := 0
		for _, cell := range c.Cells {
			if cell.Label == label {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, label))
	}
	return strings.Join(parts, ", ")
}
