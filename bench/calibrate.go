package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"golang.org/x/exp/stats"

	"github.com/bhsim/bhsim/bufcache"
)

// Observation is one published figure and the work the model did for it.
// Either Q holds the quantity of each parameter per operation (events per op,
// and timed calls per op for the harness) and the simulated figure is their
// priced sum in nanoseconds; or Loads lists the demand of every resource of a
// streaming run (see Load) and the simulated time is the busiest one's. When
// Bytes is positive the figure is a throughput, Bytes moved per simulated
// time in decimal MB/s (dd's unit); otherwise it is the time in nanoseconds.
// Fit selects the observation for calibration; the others are predictions.
type Observation struct {
	Row, Column string
	Published   float64
	Q           [numParams]float64
	Loads       []Load
	Bytes       float64
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

// binding returns the load that sets o's simulated time under p: the busiest
// of o.Loads, or o.Q as a single load.
func (p *Profile) binding(o *Observation) Load {
	if len(o.Loads) == 0 {
		return Load{Name: "cpu", Q: o.Q, Servers: 1}
	}
	i, _ := p.Bottleneck(o.Loads)
	return o.Loads[i]
}

// SimNSOf returns o's simulated time in nanoseconds under p.
func (p *Profile) SimNSOf(o Observation) float64 {
	l := p.binding(&o)
	return p.BusyNS(&l)
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
	fitted, rows, err := fitCosts(p, params, obs)
	if err != nil {
		return nil, nil, err
	}
	k := len(params)
	cal := &Calibration{Profile: p.Name, DOF: nfit - k}
	for _, q := range params {
		if fitted.NS[q] < 0 {
			return nil, nil, fmt.Errorf("bench: calibrate: %s comes out negative (%.3g ns): the model cannot fit the data with these parameters", q, fitted.NS[q])
		}
		fitted.Source[q] = fmt.Sprintf("fitted to %s (prior %.3g ns: %s)", strings.Join(rows, ", "), p.NS[q], p.Source[q])
		cal.Params = append(cal.Params, FittedParam{Param: q, Before: p.NS[q], After: fitted.NS[q], PriorSource: p.Source[q]})
	}
	for _, o := range obs {
		cal.Cells = append(cal.Cells, Cell{Row: o.Row, Column: o.Column, Published: o.Published,
			Simulated: fitted.Simulate(o), Fitted: o.Fit})
	}
	return fitted, cal, nil
}

// maxFitRounds bounds the rounds of fitCosts' active-set iteration.
const maxFitRounds = 50

// fitCosts returns a copy of p with the costs in params fitted to the
// observations marked Fit, and the names of those cells. Simulated time is
// linear in every cost within one resource, so with the resource that binds
// each cell known the fit is linear least squares on relative errors (each row
// weighted by 1/target, so a slow cell counts as much as a fast one). Which
// resource binds depends on the costs: starting from p's, fitCosts solves,
// re-derives the binding resources under the new costs and solves again,
// until they no longer change (or maxFitRounds; it keeps the best round by
// the sum of squared relative errors). A cell bound by a resource with no
// free parameter (a disk) adds no row but is still reported.
func fitCosts(p *Profile, params []Param, obs []Observation) (*Profile, []string, error) {
	cur := *p
	best, bestErr := (*Profile)(nil), math.Inf(1)
	var rows []string
	prev := ""
	for range maxFitRounds {
		k := len(params)
		ata := make([][]float64, k)
		for i := range ata {
			ata[i] = make([]float64, k)
		}
		atr := make([]float64, k)
		var sig strings.Builder
		rows = rows[:0]
		for i := range obs {
			o := &obs[i]
			if !o.Fit {
				continue
			}
			rows = append(rows, o.Row+"/"+o.Column)
			l := cur.fitBinding(o, params)
			sig.WriteString(l.Name + ";")
			fixed := cur
			for _, q := range params {
				fixed.NS[q] = 0
			}
			w := 1 / o.targetNS()
			r := (o.targetNS() - fixed.BusyNS(&l)) * w
			servers := max(l.Servers, 1)
			for a, qa := range params {
				for b, qb := range params {
					ata[a][b] += l.Q[qa] / servers * w * l.Q[qb] / servers * w
				}
				atr[a] += l.Q[qa] / servers * w * r
			}
		}
		x, err := solve(ata, atr)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: calibrate %v: %w", params, err)
		}
		for i, q := range params {
			cur.NS[q] = x[i]
		}
		if e := cur.fitError(obs); e < bestErr {
			cp := cur
			best, bestErr = &cp, e
		}
		if sig.String() == prev {
			break
		}
		prev = sig.String()
	}
	return best, rows, nil
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
	best, t := -1, 0.0
	for i := range o.Loads {
		if b := p.BusyNS(&o.Loads[i]); hasParam(&o.Loads[i], params) && (best < 0 || b > t) {
			best, t = i, b
		}
	}
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

// fitError is the sum of squared relative errors of the fitted cells under p.
func (p *Profile) fitError(obs []Observation) float64 {
	e := 0.0
	for _, o := range obs {
		if o.Fit {
			d := p.Simulate(o)/o.Published - 1
			e += d * d
		}
	}
	return e
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
