package timing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/bhsim/bhsim/internal/fanout"
)

// ClockRun simulates an observation by running it on the engine's clock
// under a profile, and returns the run's simulated time in nanoseconds. It
// must be safe for concurrent use: a clocked calibration runs several at
// once.
type ClockRun func(p *Profile) (float64, error)

// clockStep is the relative step of a clocked fit's forward differences.
// The clock's time is not smooth in a cost: a flusher pass, a jiffy's
// timer or balance_dirty_pages' pause lands earlier or later in steps, so
// a step of a millionth (refine's) would measure those steps, not the
// slope; one of a hundredth spans many of them.
const clockStep = 1e-2

// clockTol ends a clocked fit: a round that moves no fitted cost by more
// than this share of it has converged, to well inside the clock's own
// steps.
const clockTol = 1e-3

// clockSingularCond is the condition number above which a clocked fit's
// Jacobian is refused as singular, where a priced fit allows singularCond.
// Its columns are differences of runs whose times move in steps (a jiffy,
// a flusher pass: about 1e-4 of a run), so a cost whose effect the cells
// tell from the others' only below about 1e-5 of the largest is told by
// those steps, not by the cells. The threads' full fits run at 1e2-1e3;
// leaving out the one cell that fixes a cost gives 1e7 and more.
const clockSingularCond = 1e5

// maxClockRounds bounds a clocked fit's Gauss–Newton rounds; each costs
// len(params)+1 runs of every fitted run, and a halved step one more.
const maxClockRounds = 12

// clocked reports whether obs are simulated on the clock (each has a
// Clock), and refuses a mix: a calibration fits one time model.
func clocked(obs []Observation) (bool, error) {
	n := 0
	for i := range obs {
		if obs[i].Clock != nil {
			n++
		}
	}
	if n > 0 && n < len(obs) {
		return false, fmt.Errorf("timing: calibrate: %d of %d observations run on the clock: all or none must", n, len(obs))
	}
	return n > 0, nil
}

// clockSims runs clocked observations: each distinct run (Observation.Run,
// or its key when empty) once per profile of a batch, the batch's runs in
// parallel (internal/fanout). progress, when set, is called after each run
// with the runs so far.
type clockSims struct {
	obs      []Observation
	progress func(runs int)
	mu       sync.Mutex
	runs     int
}

// runName is the name o's simulation goes by: runs of the same name share
// one simulation per profile.
func runName(o *Observation) string {
	if o.Run != "" {
		return o.Run
	}
	return o.Key()
}

// figures returns the simulated figure (Observation's unit) of each
// observation idx names under each profile of ps: figures[i][j] is obs[idx[j]]
// under ps[i]. Errors: the first run that failed, wrapped with its name.
func (s *clockSims) figures(ps []*Profile, idx []int) ([][]float64, error) {
	type job struct {
		p   *Profile
		run int // the observation whose Clock runs it
	}
	var jobs []job
	slot := make([][]int, len(ps)) // slot[i][j]: the job obs[idx[j]] under ps[i] reads
	for i, p := range ps {
		seen := map[string]int{}
		slot[i] = make([]int, len(idx))
		for j, k := range idx {
			name := runName(&s.obs[k])
			at, ok := seen[name]
			if !ok {
				at = len(jobs)
				seen[name] = at
				jobs = append(jobs, job{p, k})
			}
			slot[i][j] = at
		}
	}
	ns := make([]float64, len(jobs))
	err := fanout.Run(context.Background(), len(jobs), 0, func(_ context.Context, j int) error {
		o := &s.obs[jobs[j].run]
		t, err := o.Clock(jobs[j].p)
		if err != nil {
			return fmt.Errorf("timing: run %s: %w", runName(o), err)
		}
		if !(t > 0) {
			return fmt.Errorf("timing: run %s took %v ns: no time to fit", runName(o), t)
		}
		ns[j] = t
		if s.progress != nil {
			s.mu.Lock()
			s.runs++
			s.progress(s.runs)
			s.mu.Unlock()
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(ps))
	for i := range ps {
		out[i] = make([]float64, len(idx))
		for j, k := range idx {
			out[i][j] = s.obs[k].figure(ns[slot[i][j]])
		}
	}
	return out, nil
}

// figure is o's simulated figure for a run of ns nanoseconds: MB/s when
// o.Bytes is positive, else the time.
func (o *Observation) figure(ns float64) float64 {
	if o.Bytes > 0 {
		return o.Bytes * 1e3 / ns
	}
	return ns
}

// fitClock fits params of p to the chosen clocked observations: the same
// least squares on relative errors as Calibrate's, by Gauss–Newton rounds
// whose Jacobian is forward differences of clockStep of each cost, each a
// run of every fitted run, and whose step is halved (to an eighth) until
// it lowers the sum of squared errors. It stops when a round moves no cost
// by more than clockTol of it, when no step helps, or after
// maxClockRounds, and returns the best costs it reached. A step that would
// make a cost negative is halved too: the clock cannot run a machine with a
// negative cost. Errors: a run's; a singular round (clockSingularCond: a
// parameter no fitted cell's time tells from the others).
func fitClock(p *Profile, params []Param, sims *clockSims, chosen []bool) (*Profile, error) {
	var rows []int
	for i, c := range chosen {
		if c {
			rows = append(rows, i)
		}
	}
	published := func(j int) float64 { return sims.obs[rows[j]].Published }
	residuals := func(fig []float64) []float64 {
		r := make([]float64, len(fig))
		for j, f := range fig {
			r[j] = f/published(j) - 1
		}
		return r
	}
	sumSq := func(r []float64) float64 {
		e := 0.0
		for _, v := range r {
			e += v * v
		}
		return e
	}
	cur := *p
	figs, err := sims.figures([]*Profile{&cur}, rows)
	if err != nil {
		return nil, err
	}
	r := residuals(figs[0])
	curErr := sumSq(r)
	for round := range maxClockRounds {
		steps := make([]*Profile, len(params))
		hs := make([]float64, len(params))
		for j, q := range params {
			step := cur
			hs[j] = clockStep * math.Abs(cur.NS[q])
			if hs[j] == 0 {
				hs[j] = clockStep * max(math.Abs(p.NS[q]), 1e-3)
			}
			step.NS[q] += hs[j]
			steps[j] = &step
		}
		sfigs, err := sims.figures(steps, rows)
		if err != nil {
			return nil, err
		}
		a := mat.NewDense(len(rows), len(params), nil)
		b := mat.NewVecDense(len(rows), nil)
		for k := range rows {
			for j := range params {
				a.Set(k, j, (sfigs[j][k]/published(k)-1-r[k])/hs[j])
			}
			b.SetVec(k, -r[k])
		}
		dx, err := leastSquaresCond(a, b, clockSingularCond)
		if err != nil {
			return nil, fmt.Errorf("timing: calibrate %v on the clock (round %d): %w", params, round+1, err)
		}
		improved, moved := false, 0.0
		for scale := 1.0; scale >= 1.0/8; scale /= 2 {
			next := cur
			ok := true
			for j, q := range params {
				next.NS[q] += scale * dx[j]
				ok = ok && next.NS[q] > 0
			}
			if !ok {
				continue
			}
			nf, err := sims.figures([]*Profile{&next}, rows)
			if err != nil {
				return nil, err
			}
			if nr := residuals(nf[0]); sumSq(nr) < curErr {
				for j, q := range params {
					moved = max(moved, math.Abs(scale*dx[j])/next.NS[q])
				}
				cur, r, curErr, improved = next, nr, sumSq(nr), true
				break
			}
		}
		if !improved || moved < clockTol {
			break
		}
	}
	return &cur, nil
}

// errClockNonNegative is Calibrate's refusal of Fit.NonNegative for
// observations on the clock, whose fit keeps every cost positive itself.
var errClockNonNegative = errors.New("timing: calibrate: NonNegative is for priced observations; a fit on the clock keeps its costs positive")
