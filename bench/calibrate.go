package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"golang.org/x/exp/stats"

	"github.com/bhsim/bhsim/bufcache"
)

// Observation is one published figure and the work the model did for it: the
// quantity of each parameter per operation (events per op, and timed calls per
// op for the harness). Fit selects it for calibration; the others are
// predictions.
type Observation struct {
	Row, Column string
	Published   float64
	Q           [numParams]float64
	Fit         bool
}

// Quantities converts events recorded over ops operations, with timed timed
// calls per operation, into per-operation quantities.
func Quantities(ev bufcache.Counters, ops int, timed float64) [numParams]float64 {
	var q [numParams]float64
	for e, n := range ev {
		q[e] = float64(n) / float64(ops)
	}
	q[ParamTimer] = timed
	return q
}

// Simulate prices o's quantities with p.
func (p *Profile) Simulate(o Observation) float64 {
	t := 0.0
	for i, n := range o.Q {
		t += n * p.NS[i]
	}
	return t
}

// Calibration is the report of a fit: which parameters moved, from what to
// what, and every cell's error, fitted or predicted.
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
}

// Calibrate fits the costs named in params to the observations marked Fit by
// linear least squares (simulated time is linear in every cost), keeping every
// other cost of p, and returns the fitted copy of p with the report.
//
// Errors: no observations; as many parameters as observations or more (the
// project's rule: fewer parameters than cells); fewer fitted observations than
// parameters; a repeated parameter; a singular system (a parameter that no
// fitted observation exercises); a fitted cost that comes out negative (the
// model cannot explain the data with those parameters).
func Calibrate(p *Profile, params []Param, obs []Observation) (*Profile, *Calibration, error) {
	nfit := 0
	for _, o := range obs {
		if o.Fit {
			nfit++
		}
	}
	switch {
	case len(obs) == 0:
		return nil, nil, errors.New("bench: calibrate: no observations")
	case len(params) >= len(obs):
		return nil, nil, fmt.Errorf("bench: calibrate: %d parameters for %d cells: need fewer parameters than cells", len(params), len(obs))
	case nfit < len(params):
		return nil, nil, fmt.Errorf("bench: calibrate: %d fitted cells cannot determine %d parameters", nfit, len(params))
	}
	seen := map[Param]bool{}
	for _, q := range params {
		if q < 0 || int(q) >= numParams {
			return nil, nil, fmt.Errorf("bench: calibrate: unknown parameter %d", q)
		}
		if seen[q] {
			return nil, nil, fmt.Errorf("bench: calibrate: parameter %s given twice", q)
		}
		seen[q] = true
	}
	fitted := *p
	// Normal equations AᵀA x = Aᵀr over the fitted cells, where A holds the
	// quantities of the free parameters and r the published value minus the
	// simulated contribution of the fixed ones.
	for _, q := range params {
		fitted.NS[q] = 0
	}
	k := len(params)
	ata := make([][]float64, k)
	atr := make([]float64, k)
	for i := range ata {
		ata[i] = make([]float64, k)
	}
	var rows []string
	for _, o := range obs {
		if !o.Fit {
			continue
		}
		rows = append(rows, o.Row+"/"+o.Column)
		r := o.Published - fitted.Simulate(o)
		for i, qi := range params {
			for j, qj := range params {
				ata[i][j] += o.Q[qi] * o.Q[qj]
			}
			atr[i] += o.Q[qi] * r
		}
	}
	x, err := solve(ata, atr)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: calibrate %v: %w", params, err)
	}
	cal := &Calibration{Profile: p.Name, DOF: nfit - k}
	for i, q := range params {
		if x[i] < 0 {
			return nil, nil, fmt.Errorf("bench: calibrate: %s comes out negative (%.3g ns): the model cannot fit the data with these parameters", q, x[i])
		}
		fitted.NS[q] = x[i]
		fitted.Source[q] = fmt.Sprintf("fitted to %s (prior %.3g ns: %s)", strings.Join(rows, ", "), p.NS[q], p.Source[q])
		cal.Params = append(cal.Params, FittedParam{Param: q, Before: p.NS[q], After: x[i], PriorSource: p.Source[q]})
	}
	for _, o := range obs {
		cal.Cells = append(cal.Cells, Cell{Row: o.Row, Column: o.Column, Published: o.Published,
			Simulated: fitted.Simulate(o), Fitted: o.Fit})
	}
	return &fitted, cal, nil
}

// solve solves the small dense system a x = b by Gaussian elimination with
// partial pivoting.
func solve(a [][]float64, b []float64) ([]float64, error) {
	n := len(b)
	for c := range n {
		pivot := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[pivot][c]) {
				pivot = r
			}
		}
		if math.Abs(a[pivot][c]) < 1e-12 {
			return nil, errors.New("singular system: a parameter is not exercised by the fitted cells, or two are indistinguishable")
		}
		a[c], a[pivot] = a[pivot], a[c]
		b[c], b[pivot] = b[pivot], b[c]
		for r := range n {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for i := range n {
		x[i] = b[i] / a[i][i]
	}
	return x, nil
}

// Report renders the calibration: parameters with their prior values and
// sources, then every cell with its error, fitted and predicted cells apart,
// and a summary of the absolute errors of each group.
func (c *Calibration) Report() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "calibration of profile %s: %d parameter(s) fitted, %d degree(s) of freedom\n", c.Profile, len(c.Params), c.DOF)
	for _, fp := range c.Params {
		fmt.Fprintf(&sb, "  %-14s %8.2f ns (prior %.2f ns: %s)\n", fp.Param, fp.After, fp.Before, fp.PriorSource)
	}
	for _, fitted := range []bool{true, false} {
		var errs []float64
		label := map[bool]string{true: "fitted", false: "predicted"}[fitted]
		for _, cell := range c.Cells {
			if cell.Fitted != fitted {
				continue
			}
			fmt.Fprintf(&sb, "  %-9s %-40s published %9.2f  simulated %9.2f  error %+6.1f%%\n",
				label, cell.Row+" / "+cell.Column, cell.Published, cell.Simulated, 100*cell.RelError())
			errs = append(errs, math.Abs(100*cell.RelError()))
		}
		if len(errs) > 0 {
			q := stats.Quantiles(errs, 0.5, 1)
			fmt.Fprintf(&sb, "  %s cells: %d, mean |error| %.1f%%, median %.1f%%, max %.1f%%\n",
				label, len(errs), stats.Mean(errs), q[0], q[1])
		}
	}
	return sb.String()
}
