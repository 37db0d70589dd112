package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// synthetic builds observations priced exactly by truth.
func synthetic(truth *Profile, fit ...bool) []Observation {
	var obs []Observation
	for i, f := range fit {
		var o Observation
		o.Row, o.Column, o.Fit = "row", string(rune('a'+i)), f
		o.Q[bufcache.EvLRUSlot] = float64(1 + 5*i)
		o.Q[bufcache.EvIndexLevel] = float64(6 - i)
		o.Q[ParamTimer] = 1
		o.Published = truth.Simulate(o)
		obs = append(obs, o)
	}
	return obs
}

func TestCalibrateRecoversKnownCosts(t *testing.T) {
	truth := X86Server()
	truth.NS[bufcache.EvLRUSlot], truth.NS[ParamTimer] = 3.25, 41
	obs := synthetic(truth, true, true, false)
	start := X86Server()
	fitted, cal, err := Calibrate(start, []Param{Param(bufcache.EvLRUSlot), ParamTimer}, obs)
	require.NoError(t, err)
	assert.InDelta(t, 3.25, fitted.NS[bufcache.EvLRUSlot], 1e-9)
	assert.InDelta(t, 41, fitted.NS[ParamTimer], 1e-9)
	assert.Equal(t, 0, cal.DOF)
	require.Len(t, cal.Cells, 3)
	for _, c := range cal.Cells {
		assert.InDelta(t, 0, c.RelError(), 1e-9, "the third cell is predicted exactly too")
	}
	assert.False(t, cal.Cells[2].Fitted)
	assert.Contains(t, fitted.Source[ParamTimer], "fitted to row/a, row/b")
	assert.Equal(t, 25.0, start.NS[ParamTimer], "the input profile is not modified")
	assert.Contains(t, cal.Report(), "predicted cells: 1")
}

func TestCalibrateErrors(t *testing.T) {
	p := X86Server()
	slot := Param(bufcache.EvLRUSlot)
	for _, tc := range []struct {
		name   string
		params []Param
		obs    []Observation
	}{
		{"no observations", []Param{ParamTimer}, nil},
		{"as many parameters as cells", []Param{ParamTimer, slot}, synthetic(p, true, true)},
		{"too few fitted cells", []Param{ParamTimer, slot}, synthetic(p, true, false, false)},
		{"repeated parameter", []Param{ParamTimer, ParamTimer}, synthetic(p, true, true, true)},
		{"unknown parameter", []Param{Param(999)}, synthetic(p, true, true)},
		{"not exercised", []Param{Param(bufcache.EvBioSubmit)}, synthetic(p, true, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Calibrate(p, tc.params, tc.obs)
			assert.Error(t, err)
		})
	}
	// A published figure below what the fixed costs already explain needs a negative cost.
	obs := synthetic(p, true, false)
	obs[0].Published = 1
	_, _, err := Calibrate(p, []Param{ParamTimer}, obs)
	assert.ErrorContains(t, err, "negative")
}

func TestParams(t *testing.T) {
	for i := range numParams {
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
	for i := range numParams {
		assert.NotEmpty(t, p.Source[i], "every cost has a stated source: %s", Param(i))
	}
}
