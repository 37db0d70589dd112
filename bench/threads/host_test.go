package threads

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

// TestHostTable runs the host thread as reproduce does and holds its
// table to what the README says: 16 predicted cells (4 block sizes × the
// two directions under an iops and a bps rule), every one within ±5 % of
// the kernel's recording, and nothing fitted.
func TestHostTable(t *testing.T) {
	th, err := ByName("host")
	require.NoError(t, err)
	assert.False(t, th.Calibrates())
	var progress []int
	r, err := th.Run(nil, Options{Progress: func(done, total int) { progress = append(progress, done, total) }})
	require.NoError(t, err)
	assert.Equal(t, []int{16, 16}, progress[len(progress)-2:])
	assert.Equal(t, "blocksize-6.18-host", r.Table.ID)
	require.Len(t, r.Table.Cells, 16)
	assert.Empty(t, r.Calibration.Params)
	for _, c := range r.Table.Cells {
		assert.Equal(t, timing.LabelPredicted, c.Label, "%s/%s", c.Row, c.Column)
		assert.LessOrEqual(t, math.Abs(c.RelError()), 0.05, "%s/%s: published %.2f, simulated %.2f", c.Row, c.Column, c.Published, c.Simulated)
	}
	assert.Contains(t, r.Text(), "== host (profile x86-server, nothing fitted)")
	assert.Contains(t, r.Notes, "under the iops rule")
}

// TestHostTableRules checks the experiment's point on both sides: under
// the iops rule 512-byte buffers write several times slower than 4096-byte
// ones (a bio per buffer), under the bps rule about as fast.
func TestHostTableRules(t *testing.T) {
	th, err := ByName("host")
	require.NoError(t, err)
	r, err := th.Run(nil, Options{})
	require.NoError(t, err)
	ratio := func(col string, sim bool) float64 {
		a, ok1 := r.Table.Cell("4K", col)
		b, ok2 := r.Table.Cell("512", col)
		require.True(t, ok1 && ok2, col)
		if sim {
			return a.Simulated / b.Simulated
		}
		return a.Published / b.Published
	}
	for _, sim := range []bool{false, true} {
		assert.Greater(t, ratio("W wiops=2000", sim), 6.0, "simulated %t", sim)
		assert.InDelta(t, 1.0, ratio("W wbps=8M", sim), 0.05, "simulated %t", sim)
	}
}
