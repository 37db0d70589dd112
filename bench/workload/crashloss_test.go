package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
)

// TestCrashLoss: a crash loses at most what the dirty limit lets the page
// cache hold (plus the block being written), nothing after the closing sync,
// and what is durable only grows.
func TestCrashLoss(t *testing.T) {
	preset := engine.MustKernel("5.10.10+revert")
	d := Helios4DD(LayoutDirect, preset, false)
	d.Count, d.DirtyLimit = 64, 4096 // 64 MiB through a 16 MiB dirty limit
	points, err := CrashLoss(d)
	require.NoError(t, err)
	require.Len(t, points, 65)
	prev := uint64(0)
	for i, p := range points[:64] {
		assert.Equal(t, uint64(i+1)<<20, p.Written)
		assert.GreaterOrEqual(t, p.Durable, prev)
		assert.LessOrEqual(t, p.Lost(), uint64(d.DirtyLimit+1)*4096+d.BS, "point %d", i)
		prev = p.Durable
	}
	assert.Positive(t, points[20].Lost(), "dirty data waits in the page cache")
	assert.Zero(t, points[64].Lost(), "dd's close syncs: nothing left to lose")
	text := CrashLossText(points, 16)
	assert.Contains(t, text, "most lost")
	assert.Contains(t, text, "after dd's close")

	d.Layout = LayoutRaid0
	_, err = CrashLoss(d)
	assert.Error(t, err)
}
