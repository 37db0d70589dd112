package timing

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// steppedClock makes synthetic's observations run on a clock: each run's
// time is its priced time rounded up to whole ticks of tick ns, as the
// engine's clock lands a timer or a flusher pass in steps, and runs counts
// the runs by their Run name.
func steppedClock(obs []Observation, tick float64, runs map[string]int, mu *sync.Mutex) {
	for i := range obs {
		priced := obs[i]
		obs[i].Clock = func(p *Profile) (float64, error) {
			mu.Lock()
			runs[runName(&priced)]++
			mu.Unlock()
			return math.Ceil(p.SimNSOf(priced)/tick) * tick, nil
		}
	}
}

// TestCalibrateOnTheClock fits two costs to observations whose time is a
// run's, a stepped function of the costs: the fit recovers the costs that
// made the published figures to within the steps, shares the runs of cells
// with one Run, reports every cell at the fitted costs, and its
// leave-one-out predicts each fitted cell as the priced fit does.
func TestCalibrateOnTheClock(t *testing.T) {
	truth := X86Server()
	truth.NS[bufcache.EvLRUSlot], truth.NS[ParamTimer] = 3.25, 41
	obs, keys := synthetic(truth, true, true, true, true, false)
	obs[1].Run = "shared"
	obs[2] = obs[1] // one run, two published figures of it
	obs[2].Column = "c"
	runs := map[string]int{}
	var mu sync.Mutex
	steppedClock(obs, 0.01, runs, &mu)
	fit := Fit{Params: []Param{Ev(bufcache.EvLRUSlot), ParamTimer}, Cells: keys}
	var progress int
	fit.Progress = func(n int) { progress = n }

	fitted, cal, err := Calibrate(X86Server(), fit, obs)
	require.NoError(t, err)
	assert.InEpsilon(t, 3.25, fitted.NS[bufcache.EvLRUSlot], 2e-3)
	assert.InEpsilon(t, 41, fitted.NS[ParamTimer], 2e-3)
	assert.Contains(t, fitted.Source[ParamTimer], "fitted to row/a, row/b, row/c, row/d")
	require.Len(t, cal.Cells, 5)
	for _, c := range cal.Cells {
		assert.InDelta(t, 0, c.RelError(), 1e-3, c.Column)
	}
	assert.Equal(t, LabelPredicted, cal.Cells[4].Label)
	assert.Equal(t, runs["row/a"], runs["shared"], "the two cells of one run ran once per profile")
	assert.Equal(t, runs["row/a"]+runs["shared"]+runs["row/d"]+runs["row/e"], progress, "progress counts every run")
	assert.Equal(t, 1, runs["row/e"], "an unfitted cell runs once, for the report")

	rep, err := Reported(X86Server(), fitted, fit, obs)
	require.NoError(t, err)
	assert.Equal(t, cal.Cells, rep.Cells, "a recorded fit reports as the fit did")
	assert.Equal(t, cal.Params, rep.Params)

	cv, err := CrossValidate(X86Server(), fit, obs)
	require.NoError(t, err)
	require.Len(t, cv, 4)
	for _, l := range cv {
		assert.Empty(t, l.Why)
		assert.InDelta(t, 0, l.Cell.RelError(), 2e-3, "%s: the model explains every cell", l.Cell.Column)
	}
}

// TestCalibrateOnTheClockErrors checks a clocked fit's refusals: a mix of
// clocked and priced observations, NonNegative, a run that fails or takes
// no time, and a cost no fitted cell's time depends on.
func TestCalibrateOnTheClockErrors(t *testing.T) {
	truth := X86Server()
	truth.NS[ParamTimer] = 41
	fresh := func() ([]Observation, []string) {
		obs, keys := synthetic(truth, true, true, true)
		steppedClock(obs, 0.01, map[string]int{}, &sync.Mutex{})
		return obs, keys
	}
	obs, keys := fresh()
	fit := Fit{Params: []Param{ParamTimer}, Cells: keys}
	obs[0].Clock = nil
	_, _, err := Calibrate(X86Server(), fit, obs)
	assert.ErrorContains(t, err, "2 of 3 observations run on the clock")

	obs, _ = fresh()
	_, _, err = Calibrate(X86Server(), Fit{Params: fit.Params, Cells: keys, NonNegative: true}, obs)
	assert.ErrorContains(t, err, "NonNegative")

	boom := errors.New("boom")
	obs[1].Clock = func(*Profile) (float64, error) { return 0, boom }
	_, _, err = Calibrate(X86Server(), fit, obs)
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "run row/b")

	obs[1].Clock = func(*Profile) (float64, error) { return 0, nil }
	_, _, err = Calibrate(X86Server(), fit, obs)
	assert.ErrorContains(t, err, "no time to fit")

	obs, _ = fresh()
	_, _, err = Calibrate(X86Server(), Fit{Params: []Param{Ev(bufcache.EvBioSubmit)}, Cells: keys}, obs)
	assert.ErrorContains(t, err, "singular")
}
