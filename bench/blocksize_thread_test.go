package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/race"
)

// TestReproduceBlocksize runs the whole Helios4 table (20 dd runs of 2000
// MiB) and checks the thread's targets: the revert's write speed-up per
// column within ±25 % of the published 5.10.10 ratio, every write cell within
// ±25 %, reads unchanged by the policy (ratio 0.9–1.1), at most 8 fitted costs.
func TestReproduceBlocksize(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("a minute of simulation: not in -short or -race runs")
	}
	th, err := ReproduceBlocksize(Helios4(), DefaultBlocksizeFit(), 2000)
	require.NoError(t, err)
	require.Len(t, th.Table.Cells, 40)
	assert.LessOrEqual(t, len(th.Calibration.Params), 8)
	assert.Positive(t, th.Calibration.DOF)
	for _, l := range Layouts() {
		sim, pub := th.Ratio(l)
		assert.InEpsilon(t, pub, sim, 0.25, "%s write ratio", l)
		grow := th.Runs[DDKey{blocksize.PolicyGrow, l, true}].MBps(th.Profile)
		logical := th.Runs[DDKey{blocksize.PolicyLogical, l, true}].MBps(th.Profile)
		assert.InDelta(t, 1, grow/logical, 0.1, "%s read ratio", l)
	}
	fitted := 0
	for _, c := range th.Table.Cells {
		if strings.HasSuffix(c.Column, " W") {
			assert.InEpsilon(t, c.Published, c.Simulated, 0.25, "%s %s", c.Row, c.Column)
		}
		if c.Fitted {
			fitted++
		}
	}
	assert.Equal(t, len(DefaultBlocksizeFit().Cells), fitted)
	text := th.Text()
	for _, want := range []string{"RAID10 n2", "bottleneck", "predicted", "write speed-up"} {
		assert.Contains(t, text, want)
	}
}
