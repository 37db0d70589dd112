package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/race"
)

func TestWritePresets(t *testing.T) {
	for _, p := range WritePresets() {
		got, err := WritePresetByName(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p, got)
		assert.NotEmpty(t, p.Description)
	}
	_, err := WritePresetByName("6.5")
	assert.ErrorContains(t, err, "6.6-fix")
}

// TestXuYangFaultIn checks the root cause on a short run of each bs: 6.6
// pre-faults many user pages per page written, more as bs grows; the revert
// and the fix touch each user page once.
func TestXuYangFaultIn(t *testing.T) {
	prev := 0.0
	for _, bs := range XuYangBS() {
		for _, k := range WritePresets() {
			dd := XuYangDD(k, bs, 1)
			dd.Count = 8
			r, err := dd.Run()
			require.NoError(t, err)
			per := r.FaultInPerPage()
			if k.Name == "6.6" {
				assert.Greater(t, per, prev, "bs %d", bs)
				assert.Greater(t, per, 10.0)
				prev = per
			} else {
				assert.InDelta(t, 1, per, 1e-9, "%s bs %d", k.Name, bs)
			}
		}
	}
}

// TestReproduceIomap runs Xu Yang's table at its full size (18 runs of
// 4 GiB) and checks the thread's targets: the 6.6 curve falls monotonically
// with bs and each cell is within ±15 % of his figure; the revert and the fix
// stay within ±5 % of 333 MB/s; at most 4 fitted costs.
func TestReproduceIomap(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("half a minute of simulation: not in -short or -race runs")
	}
	th, err := ReproduceIomap(XuYangBoard(), DefaultIomapFit(), 1)
	require.NoError(t, err)
	require.Len(t, th.Table.Cells, 18)
	assert.LessOrEqual(t, len(th.Calibration.Params), 4)
	prev := 1e9
	for _, c := range th.Table.Cells {
		if c.Column == WritePresets()[0].Column {
			assert.InEpsilon(t, c.Published, c.Simulated, 0.15, c.Row)
			assert.Less(t, c.Simulated, prev, "falls with bs: %s", c.Row)
			prev = c.Simulated
		} else {
			assert.InEpsilon(t, 333, c.Simulated, 0.05, "%s %s", c.Row, c.Column)
		}
	}
	assert.Contains(t, th.Text(), "faultin")
}
