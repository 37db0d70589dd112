package threads

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/race"
)

// allocTestScale is the size the thread's test runs at: 8 MiB, 2 under the
// race detector.
func allocTestScale() float64 {
	if race.Enabled {
		return 2.0 / workload.PostedWriteTestMiB
	}
	return 8.0 / workload.PostedWriteTestMiB
}

// allocRun is what reproduceAlloc returns.
type allocRun struct {
	th   *Reproduction
	runs allocRuns
}

// allocSmall is the thread at allocTestScale, shared by the tests that
// check it.
var allocSmall = memo(func() (allocRun, error) {
	th, runs, err := reproduceAlloc(timing.X86Desktop2017(), AllocFit(), Options{Scale: allocTestScale()})
	return allocRun{th, runs}, err
})

func TestReproduceAlloc(t *testing.T) {
	t.Parallel()
	small := allocSmall(t)
	th, runs := small.th, small.runs
	assert.Equal(t, "alloc-sean-fu", th.Table.ID)
	assert.Equal(t, "x86-2017", th.Profile.Name)
	require.Len(t, th.Table.Cells, 4)
	require.Len(t, th.Calibration.Params, 2)
	assert.Equal(t, 0, th.Calibration.DOF)
	assertPriorsHold(t, th)
	cell := map[string]timing.Cell{}
	for _, c := range th.Table.Cells {
		cell[c.Row+"/"+c.Column] = c
	}
	for _, tc := range []struct {
		name      string
		published float64
		fitted    bool
	}{
		{"write/before", 4440, true}, {"write/after", 3722.4, false},
		{"read/before", 3073.6, true}, {"read/after", 2729.6, false},
	} {
		c, ok := cell[tc.name]
		require.True(t, ok, tc.name)
		assert.InDelta(t, tc.published, c.Published, 1e-6, tc.name)
		assert.Equal(t, tc.fitted, c.Label == timing.LabelFitted, tc.name)
	}
	for _, row := range []string{"write", "read"} {
		before, after := cell[row+"/before"], cell[row+"/after"]
		published := 1 - after.Published/before.Published
		simulated := 1 - after.Simulated/before.Simulated
		assert.Greater(t, published, 0.10, "%s: he claimed 16 %% and 11 %%", row)
		assert.Greater(t, simulated, 0.0, "%s: the circular list is not slower", row)
		assert.Less(t, simulated, published/100, "%s: the model's difference is far below the claim", row)
	}

	// The simulated difference is the saved ring-walk steps, priced, and
	// nothing else: for the write, 4 steps a ring, one ring a page plus the
	// indirect blocks'.
	lin, circ := runs["4.12"], runs["4.12-circular"]
	steps := float64(lin.Write.Events[bufcache.EvRingWalk] - circ.Write.Events[bufcache.EvRingWalk])
	assert.Equal(t, 4*(lin.Write.Pages()+float64(lin.TreeBlocks)), steps)
	msPerRun := steps * th.Profile.NS[bufcache.EvRingWalk] * workload.PostedWriteTestMiB * mebibyte / float64(lin.Write.Bytes) / 1e6
	assert.InDelta(t, msPerRun, cell["write/before"].Simulated-cell["write/after"].Simulated, 1e-6)

	js, err := json.Marshal(th.Table)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(js, &back))
	for _, k := range []string{"id", "title", "source", "unit", "cells"} {
		assert.Contains(t, back, k)
	}
	text := th.Text()
	for _, want := range []string{"fitted", "predicted", "Al Viro", "Verdict: no", "ledger of one 4 KiB page, write",
		"ring-walks", "extrapolated", "reads a cached file: 0 rings a page"} {
		assert.Contains(t, text, want)
	}
}

// TestReproduceAllocFullScale checks, on the thread at its full 800 MiB as
// the command line runs it (fullAlloc), that a small run extrapolates to
// the same table: every page costs the same.
func TestReproduceAllocFullScale(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("800 MiB: not under -short or -race")
	}
	t.Parallel()
	full := fullAlloc(t)
	small := allocSmall(t).th
	requireFittedCopy(t, full.Profile)
	for i, c := range full.Table.Cells {
		assert.InEpsilon(t, c.Simulated, small.Table.Cells[i].Simulated, 0.005, "%s/%s", c.Row, c.Column)
	}
	assert.NotContains(t, full.Text(), "extrapolated")
}

func TestReproduceAllocErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		fit  timing.Fit
	}{
		{"three parameters for two fitted cells",
			timing.Fit{Params: append(AllocFit().Params, timing.Ev(bufcache.EvCopyByte)), Cells: AllocFit().Cells}},
		{"a parameter no fitted cell exercises",
			timing.Fit{Params: []timing.Param{timing.Ev(bufcache.EvWriteIter)}, Cells: []string{"read/before"}}},
	} {
		_, _, err := reproduceAlloc(timing.X86Desktop2017(), tc.fit, Options{Scale: 0.01})
		assert.Error(t, err, tc.name)
	}
}
