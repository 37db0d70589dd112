package threads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/race"
)

// The error bounds of Xu Yang's table that the README and docs/threads.md
// state: every 6.6 cell within iomapCurveBound of his figure, every cell of
// the revert and the fix within iomapFlatBound of 333 MB/s, and the
// leave-one-out error of the fitted reverted cells within iomapFlatBound.
const (
	iomapCurveBound = 0.15
	iomapFlatBound  = 0.05
)

// TestReproduceIomap checks the thread's targets on Xu Yang's table at its
// full size (18 runs of 4 GiB, made once for the test binary: fullIomap):
// the 6.6 curve falls monotonically with bs, and the bounds above; at most
// 4 fitted costs, each within PriorFactor of its prior (the SSD's rate
// among them: an assumption the fit names).
func TestReproduceIomap(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("half a minute of simulation: not in -short or -race runs")
	}
	t.Parallel()
	full := fullIomap(t)
	th, runs := full.rep, full.runs
	require.Len(t, th.Table.Cells, 18)
	requireFittedCopy(t, th.Profile)
	require.Len(t, runs, 18)
	assert.LessOrEqual(t, len(th.Calibration.Params), 4)
	assertPriorsHold(t, th)
	prev := 1e9
	for _, c := range th.Table.Cells {
		if c.Column == iomapKernels[0].column {
			assert.InEpsilon(t, c.Published, c.Simulated, iomapCurveBound, c.Row)
			assert.Less(t, c.Simulated, prev, "falls with bs: %s", c.Row)
			prev = c.Simulated
		} else {
			assert.InEpsilon(t, 333, c.Simulated, iomapFlatBound, "%s %s", c.Row, c.Column)
		}
	}
	for _, l := range th.CrossValidation {
		if l.Cell.Column == iomapKernels[1].column {
			require.Empty(t, l.Why, l.Cell.Row)
			assert.InEpsilon(t, l.Cell.Published, l.Cell.Simulated, iomapFlatBound, "leave-one-out %s", l.Cell.Row)
		}
	}
	assert.Contains(t, th.Text(), "faultin")
	require.Len(t, th.Figures, 1)
	assert.Len(t, th.Figures[0].Panels[0].Series, 6, "published and simulated per kernel")
}
