package threads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/internal/race"
)

// TestReproduceIomap runs Xu Yang's table at its full size (18 runs of
// 4 GiB) and checks the thread's targets: the 6.6 curve falls monotonically
// with bs and each cell is within ±15 % of his figure; the revert and the fix
// stay within ±5 % of 333 MB/s; at most 4 fitted costs.
func TestReproduceIomap(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("half a minute of simulation: not in -short or -race runs")
	}
	th, runs, err := reproduceIomap(timing.IMX8Board(), IomapFit(), Options{})
	require.NoError(t, err)
	require.Len(t, th.Table.Cells, 18)
	requireFittedCopy(t, th.Profile)
	require.Len(t, runs, 18)
	assert.LessOrEqual(t, len(th.Calibration.Params), 4)
	prev := 1e9
	for _, c := range th.Table.Cells {
		if c.Column == iomapKernels[0].column {
			assert.InEpsilon(t, c.Published, c.Simulated, 0.15, c.Row)
			assert.Less(t, c.Simulated, prev, "falls with bs: %s", c.Row)
			prev = c.Simulated
		} else {
			assert.InEpsilon(t, 333, c.Simulated, 0.05, "%s %s", c.Row, c.Column)
		}
	}
	assert.Contains(t, th.Text(), "faultin")
	require.Len(t, th.Figures, 1)
	assert.Len(t, th.Figures[0].Panels[0].Series, 6, "published and simulated per kernel")
}
