package timing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// synthetic builds observations priced exactly by truth, and the keys of
// those marked fit.
func synthetic(truth *Profile, fit ...bool) ([]Observation, []string) {
	var obs []Observation
	var keys []string
	for i, f := range fit {
		var o Observation
		o.Row, o.Column = "row", string(rune('a'+i))
		o.Q[bufcache.EvLRUSlot] = float64(1 + 5*i)
		o.Q[bufcache.EvIndexLevel] = float64(6 - i)
		o.Q[ParamTimer] = 1
		o.Published = truth.Simulate(o)
		obs = append(obs, o)
		if f {
			keys = append(keys, o.Key())
		}
	}
	return obs, keys
}

func TestCalibrateRecoversKnownCosts(t *testing.T) {
	truth := X86Server()
	truth.NS[bufcache.EvLRUSlot], truth.NS[ParamTimer] = 3.25, 41
	obs, keys := synthetic(truth, true, true, false)
	start := X86Server()
	fitted, cal, err := Calibrate(start, Fit{Params: []Param{Ev(bufcache.EvLRUSlot), ParamTimer}, Cells: keys}, obs)
	require.NoError(t, err)
	assert.InDelta(t, 3.25, fitted.NS[bufcache.EvLRUSlot], 1e-9)
	assert.InDelta(t, 41, fitted.NS[ParamTimer], 1e-9)
	assert.Equal(t, 0, cal.DOF)
	require.Len(t, cal.Cells, 3)
	for _, c := range cal.Cells {
		assert.InDelta(t, 0, c.RelError(), 1e-9, "the third cell is predicted exactly too")
	}
	assert.Equal(t, LabelPredicted, cal.Cells[2].Label)
	assert.Equal(t, LabelFitted, cal.Cells[0].Label)
	assert.Contains(t, fitted.Source[ParamTimer], "fitted to row/a, row/b")
	assert.Equal(t, 25.0, start.NS[ParamTimer], "the input profile is not modified")
	assert.Contains(t, cal.Report(), "predicted cells: 1")
	assert.Contains(t, cal.Report(), "2 fitted, 0 fitted (shared run), 0 input, 1 predicted")
}

func TestCalibrateErrors(t *testing.T) {
	p := X86Server()
	slot := Ev(bufcache.EvLRUSlot)
	two, twoKeys := synthetic(p, true, true)
	oneOfThree, oneKey := synthetic(p, true, false, false)
	three, threeKeys := synthetic(p, true, true, true)
	for _, tc := range []struct {
		name, want string
		fit        Fit
		obs        []Observation
	}{
		{"no observations", "no observations", Fit{Params: []Param{ParamTimer}}, nil},
		{"as many parameters as cells", "fewer parameters than cells", Fit{Params: []Param{ParamTimer, slot}, Cells: twoKeys}, two},
		{"too few fitted cells", "cannot determine", Fit{Params: []Param{ParamTimer, slot}, Cells: oneKey}, oneOfThree},
		{"repeated parameter", "given twice", Fit{Params: []Param{ParamTimer, ParamTimer}, Cells: threeKeys}, three},
		{"unknown parameter", "unknown parameter", Fit{Params: []Param{Param(999)}, Cells: twoKeys}, two},
		{"not exercised", "singular", Fit{Params: []Param{Ev(bufcache.EvBioSubmit)}, Cells: twoKeys}, two},
		{"unknown cell", "names no observation", Fit{Params: []Param{ParamTimer}, Cells: []string{"row/z"}}, two},
		{"repeated cell", "given twice", Fit{Params: []Param{ParamTimer}, Cells: []string{"row/a", "row/a"}}, three},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Calibrate(p, tc.fit, tc.obs)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	// A published figure below what the fixed costs already explain needs a negative cost.
	obs, keys := synthetic(p, true, false)
	obs[0].Published = 1
	_, _, err := Calibrate(p, Fit{Params: []Param{ParamTimer}, Cells: keys}, obs)
	assert.ErrorContains(t, err, "negative")
}

// TestCalibrateLabels checks the labels of unfitted cells: a cell that shares
// its run with a fitted cell is not a prediction, nor is one marked Input.
func TestCalibrateLabels(t *testing.T) {
	truth := X86Server()
	obs, _ := synthetic(truth, false, false, false, false)
	obs[0].Run, obs[1].Run = "run-1", "run-1"
	obs[2].Input = true
	_, cal, err := Calibrate(X86Server(), Fit{Params: []Param{ParamTimer}, Cells: []string{obs[0].Key()}}, obs)
	require.NoError(t, err)
	var got []Label
	for _, c := range cal.Cells {
		got = append(got, c.Label)
	}
	assert.Equal(t, []Label{LabelFitted, LabelShared, LabelInput, LabelPredicted}, got)
}

// TestCrossValidate checks leave-one-out on data that the model explains
// exactly (every left-out cell is predicted exactly) and on data it does not
// (a left-out outlier is predicted with the error the others imply).
func TestCrossValidate(t *testing.T) {
	truth := X86Server()
	truth.NS[ParamTimer] = 41
	obs, keys := synthetic(truth, true, true, true)
	fit := Fit{Params: []Param{ParamTimer}, Cells: keys}
	cells, err := CrossValidate(X86Server(), fit, obs)
	require.NoError(t, err)
	require.Len(t, cells, 3)
	for _, c := range cells {
		assert.Empty(t, c.Why)
		assert.InDelta(t, 0, c.Cell.RelError(), 1e-9, c.Cell.Column)
	}
	obs[2].Published *= 2 // an outlier the timer alone cannot explain
	cells, err = CrossValidate(X86Server(), fit, obs)
	require.NoError(t, err)
	assert.InDelta(t, -0.5, cells[2].Cell.RelError(), 1e-9, "fitted on the two exact cells, the outlier is predicted at half")
	_, err = CrossValidate(X86Server(), Fit{Params: []Param{ParamTimer}, Cells: keys[:1]}, obs)
	assert.ErrorIs(t, err, ErrNoSpareCell, "one fitted cell: nothing left to fit")

	// A parameter only one cell exercises: leaving that cell out leaves a
	// singular fit, reported for that cell alone.
	two, twoKeys := synthetic(truth, true, true, true)
	two[2].Q[Ev(bufcache.EvBioSubmit)] = 1
	cells, err = CrossValidate(X86Server(), Fit{Params: []Param{ParamTimer, Ev(bufcache.EvBioSubmit)}, Cells: twoKeys}, two)
	require.NoError(t, err)
	assert.Empty(t, cells[0].Why)
	assert.Contains(t, cells[2].Why, "singular")
}

func TestParams(t *testing.T) {
	for i := range NumParams {
		q, err := ParseParam(Param(i).String())
		require.NoError(t, err)
		assert.Equal(t, Param(i), q)
	}
	_, err := ParseParam("nope")
	assert.Error(t, err)
	_, err = ProfileByName("nope")
	assert.ErrorContains(t, err, "x86-server")
	p, err := ProfileByName("x86-server")
	require.NoError(t, err)
	for i := range NumParams {
		assert.NotEmpty(t, p.Source[i], "every cost has a stated source: %s", Param(i))
	}
}

func TestX86Desktop2017(t *testing.T) {
	p := X86Desktop2017()
	s := X86Server()
	assert.Equal(t, "x86-2017", p.Name)
	assert.InDelta(t, 6/3.5, p.NS[bufcache.EvRingWalk], 1e-12, "6 cycles at 3.5 GHz")
	assert.InDelta(t, s.NS[bufcache.EvFolioGet]*3/3.5, p.NS[bufcache.EvFolioGet], 1e-12, "server cycles at 3.5 GHz")
	for i := range NumParams {
		if p.NS[i] != 0 {
			assert.NotEmpty(t, p.Source[i], "%s has no source", Param(i))
		}
	}
}

// TestPriorFactor checks how a calibration reports a cost that ends far from
// its prior: within PriorFactor either way it holds; beyond it the report
// flags it, with the thread's reason when the fit gives one (and the fitted
// profile's source carries that reason).
func TestPriorFactor(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after float64
		within        bool
	}{
		{"equal", 25, 25, true}, {"three times", 25, 75, true}, {"a third", 30, 10, true},
		{"above", 25, 76, false}, {"below", 30, 9.9, false}, {"zero prior, zero cost", 0, 0, true},
		{"zero prior", 0, 1, false},
	} {
		assert.Equal(t, tc.within, FittedParam{Before: tc.before, After: tc.after}.WithinPrior(), tc.name)
	}

	truth := X86Server()
	truth.NS[ParamTimer] = 10 * X86Server().NS[ParamTimer]
	obs, keys := synthetic(truth, true, true)
	for _, why := range []string{"", "the harness also pays a cache miss"} {
		fit := Fit{Params: []Param{ParamTimer}, Cells: keys}
		if why != "" {
			fit.Why = map[Param]string{ParamTimer: why}
		}
		fitted, cal, err := Calibrate(X86Server(), fit, obs)
		require.NoError(t, err)
		require.Len(t, cal.Params, 1)
		assert.False(t, cal.Params[0].WithinPrior())
		assert.Equal(t, why, cal.Params[0].Why)
		if why == "" {
			assert.Contains(t, cal.Report(), "gives no reason")
		} else {
			assert.Contains(t, cal.Report(), "because "+why)
			assert.Contains(t, fitted.Source[ParamTimer], why)
		}
	}
}

// TestCalibrateNonNegative pins at 0 the cost a least-squares fit would
// make negative and fits the other again; without NonNegative the same
// cells are an error, and a fit whose every cost is negative is one
// either way.
func TestCalibrateNonNegative(t *testing.T) {
	a, b, bios := Ev(bufcache.EvBHAlloc), Ev(bufcache.EvBHFree), Ev(bufcache.EvBioSubmit)
	cells := func(fixed float64, published ...float64) []Observation {
		var out []Observation
		for i, ns := range published {
			var q Quantities
			q[a], q[b], q[bios] = 1, float64(i+1), fixed
			out = append(out, Observation{Row: "r", Column: string(rune('x' + i)), Published: ns, Q: q})
		}
		return out
	}
	fit := Fit{Params: []Param{a, b}, Cells: []string{"r/x", "r/y", "r/z"}}
	// A + B = 100, A + 2B = 80, A + 3B = 60 ask for B = −20.
	_, _, err := Calibrate(X86Server(), fit, cells(0, 100, 80, 60))
	assert.ErrorContains(t, err, "negative")

	fit.NonNegative = true
	p, cal, err := Calibrate(X86Server(), fit, cells(0, 100, 80, 60))
	require.NoError(t, err)
	assert.Zero(t, p.NS[b], "pinned")
	assert.Greater(t, p.NS[a], 60.0, "A alone, between the cells")
	assert.Less(t, p.NS[a], 100.0)
	require.Len(t, cal.Params, 2)
	assert.False(t, cal.Params[0].Pinned)
	assert.True(t, cal.Params[1].Pinned)
	assert.Contains(t, p.Source[b], "pinned at 0")
	assert.Contains(t, cal.Report(), "pinned at 0")

	p, cal, err = Calibrate(X86Server(), fit, cells(0, 100, 150, 200))
	require.NoError(t, err, "a fit with no negative cost pins nothing")
	assert.InDelta(t, 50, p.NS[a], 1e-6)
	assert.InDelta(t, 50, p.NS[b], 1e-6)
	assert.False(t, cal.Params[0].Pinned || cal.Params[1].Pinned)

	// Each cell's bio already costs more than the cell took.
	_, _, err = Calibrate(X86Server(), fit, cells(1, 1, 1, 1))
	assert.ErrorContains(t, err, "every cost comes out negative")
}
