package threads

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/internal/race"
)

// TestReproduceBlocksize runs the whole Helios4 table (20 dd runs of 2000
// MiB) and checks the thread's targets: the revert's write speed-up per
// column within ±25 % of the published 5.10.10 ratio, every write cell within
// ±25 %, reads unchanged by the policy (ratio 0.9–1.1), at most 8 fitted
// costs, and the older rows labelled as sharing the fitted rows' runs.
func TestReproduceBlocksize(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("a minute of simulation: not in -short or -race runs")
	}
	th, runs, err := reproduceBlocksize(timing.Helios4(), BlocksizeFit(), Options{})
	require.NoError(t, err)
	require.Len(t, th.Table.Cells, 40)
	requireFittedCopy(t, th.Profile)
	assert.LessOrEqual(t, len(th.Calibration.Params), 8)
	assert.Positive(t, th.Calibration.DOF)
	require.Len(t, th.Derived, 1)
	for _, c := range th.Derived[0].Cells {
		if c.Column == "write speed-up" {
			assert.InEpsilon(t, c.Published, c.Simulated, 0.25, "%s write ratio", c.Row)
		} else {
			assert.InDelta(t, 1, c.Simulated, 0.1, "%s read ratio", c.Row)
		}
	}
	for _, l := range workload.Layouts() {
		assert.Equal(t, uint32(512), runs[blocksizeRun{"5.10.10", l, false}].BlockSize)
		assert.Equal(t, uint32(4096), runs[blocksizeRun{"5.10.10+revert", l, false}].BlockSize)
	}
	labels := map[timing.Label]int{}
	for _, c := range th.Table.Cells {
		if strings.HasSuffix(c.Column, " W") {
			assert.InEpsilon(t, c.Published, c.Simulated, 0.25, "%s %s", c.Row, c.Column)
		}
		labels[c.Label]++
		if c.Row == "9011495c9466" || c.Row == "5ff9f19231a0" {
			if strings.HasSuffix(c.Column, " W") {
				assert.Equal(t, timing.LabelShared, c.Label, "%s %s reuses a fitted run", c.Row, c.Column)
			}
		}
	}
	assert.Equal(t, len(BlocksizeFit().Cells), labels[timing.LabelFitted])
	text := th.Text()
	for _, want := range []string{"RAID10 n2", "bottleneck", "predicted", "write speed-up", "fitted (shared run)"} {
		assert.Contains(t, text, want)
	}
}
