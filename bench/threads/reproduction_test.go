package threads

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"alloc", "blocksize", "iomap", "lru", "host"}, Names())
	for _, th := range All() {
		got, err := ByName(th.Name)
		require.NoError(t, err)
		assert.Equal(t, th.Name, got.Name)
		assert.NotEmpty(t, th.Subject)
		_, err = timing.ProfileByName(th.Profile)
		assert.NoError(t, err, "%s's profile is built in", th.Name)
	}
	_, err := ByName("raid")
	assert.ErrorContains(t, err, "valid: alloc, blocksize, iomap, lru, host")
}

func TestRunScaleErrors(t *testing.T) {
	th, err := ByName("alloc")
	require.NoError(t, err)
	for _, scale := range []float64{-1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := th.Run(nil, Options{Scale: scale})
		assert.ErrorContains(t, err, "outside (0, 1]", "scale %v", scale)
	}
}

// memo returns a function that runs f the first time any test calls it
// and gives every call its result: a reproduction is computed once per test
// binary however many tests check it. Simulated figures depend on nothing
// but a run's inputs (not on scheduling or on which test asks first), so the
// tests sharing a result check what each would compute alone. Callers must
// not modify what it returns.
func memo[T any](f func() (T, error)) func(t *testing.T) T {
	var once sync.Once
	var v T
	var err error
	return func(t *testing.T) T {
		t.Helper()
		once.Do(func() { v, err = f() })
		require.NoError(t, err)
		return v
	}
}

// lruRun is the lru thread run as the command line runs it (Thread.Run on
// its own profile, at full size), shared by the tests that check it.
var lruRun = memo(func() (*Reproduction, error) {
	th, err := ByName("lru")
	if err != nil {
		return nil, err
	}
	return th.Run(nil, Options{})
})

// TestRunLRU runs the registry's cheapest thread through Run: its own
// profile, calibrated, the progress-free path, the text's header.
func TestRunLRU(t *testing.T) {
	t.Parallel()
	r := lruRun(t)
	assert.Equal(t, "lru", r.Thread)
	assert.Equal(t, "x86-server", r.Profile.Name)
	assert.Contains(t, r.Profile.Source[timing.ParamTimer], "fitted to")
	assert.Contains(t, r.Text(), "== lru (profile x86-server, calibrated)")
	require.Len(t, r.Figures, 1)
	assert.Len(t, r.Figures[0].Panels, 3)
	p, err := Calibrated("x86-server", Options{})
	require.NoError(t, err)
	assert.Equal(t, r.Profile.NS, p.NS)
	_, err = Calibrated("nope", Options{})
	assert.Error(t, err)
}

func TestDerivedLabel(t *testing.T) {
	for _, tc := range []struct {
		in   []timing.Label
		want timing.Label
	}{
		{[]timing.Label{timing.LabelPredicted, timing.LabelPredicted}, timing.LabelPredicted},
		{[]timing.Label{timing.LabelPredicted, timing.LabelFitted}, timing.LabelFitted},
		{[]timing.Label{timing.LabelShared, timing.LabelInput}, timing.LabelShared},
		{nil, timing.LabelPredicted},
	} {
		assert.Equal(t, tc.want, derivedLabel(tc.in...), "%v", tc.in)
	}
}

// assertPriorsHold checks that every cost r's calibration fitted ends within
// timing.PriorFactor of its documented prior, or that the thread says why
// not (timing.Fit.Why).
func assertPriorsHold(t *testing.T, r *Reproduction) {
	t.Helper()
	for _, fp := range r.Calibration.Params {
		assert.True(t, fp.WithinPrior() || fp.Why != "", "%s: %s fitted at %.4g ns, ×%.3g its prior, and no reason given",
			r.Thread, fp.Param, fp.After, fp.After/fp.Before)
	}
}
