package threads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/race"
)

// TestCalibratedOnClock runs Xu Yang's table small (a fiftieth of each
// run) the three ways a thread on the clock calibrates: from its built-in
// profile it reads the recorded fit (no leave-one-out at this size); from
// other costs it fits on the clock, closer to the fitted cells than the
// record (fitted to full-size runs) comes on these short runs, leaving
// its leave-one-out to CrossValidate;
// and with CrossValidate, one leave-one-out cell per fitted cell. The
// progress reaches its total for the recorded fit.
func TestCalibratedOnClock(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("fits on the clock: not in -short or -race runs")
	}
	t.Parallel()
	th, err := ByName("iomap")
	require.NoError(t, err)
	require.True(t, th.RecordsFit())
	builtin, err := timing.ProfileByName(th.Profile)
	require.NoError(t, err)
	var done, total int
	r, err := th.Run(builtin, Options{Scale: 0.02, Progress: func(d, n int) { done, total = d, n }})
	require.NoError(t, err)
	rec, err := Fitted(th.Profile)
	require.NoError(t, err)
	assert.Equal(t, rec.NS, r.Profile.NS, "the built-in profile's fit is the record")
	assert.Contains(t, r.CrossValidationNote, "published size only")
	assert.Equal(t, 18, total, "one run a cell of the table")
	assert.Equal(t, total, done)

	sumSq := func(r *Reproduction) float64 {
		e := 0.0
		for _, c := range r.Table.Cells {
			if c.Label == timing.LabelFitted {
				e += c.RelError() * c.RelError()
			}
		}
		return e
	}
	recorded := sumSq(r)
	other := *builtin
	other.NS[timing.Ev(bufcache.EvCopyByte)] *= 1.5
	r, err = th.Run(&other, Options{Scale: 0.02})
	require.NoError(t, err)
	assert.NotEqual(t, rec.NS, r.Profile.NS, "fitted anew, at this size")
	assert.Less(t, sumSq(r), recorded, "a fit to these short runs fits them better than the full-size record does")
	assert.Empty(t, r.CrossValidation)
	assert.Contains(t, r.CrossValidationNote, "--cross-validate")

	r, err = th.Run(&other, Options{Scale: 0.02, CrossValidate: true})
	require.NoError(t, err)
	assert.Len(t, r.CrossValidation, len(IomapFit().Cells))
}
