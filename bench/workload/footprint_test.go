package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/race"
)

// TestFootprintOf measures the model's memory per cached page and per buffer
// head, dense and spread over 16 TiB, and checks the figures are sane: a
// buffer head costs at least its struct and at most a few times the kernel's
// 104 bytes; a page costs at least its folio, and more when spread out (its
// own index nodes); the spread pages need the index's six levels.
func TestFootprintOf(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's shadow memory distorts heap figures")
	}
	pages := 1 << 14
	if testing.Short() {
		pages = 1 << 12
	}
	denseHeight := 1 // pages 0 … pages−1: 64^height must exceed the last
	for n := 64; n < pages; n *= 64 {
		denseHeight++
	}
	for _, tt := range []struct {
		name       string
		sparse     bool
		wantHeight int
	}{
		{"dense", false, denseHeight},
		{"sparse", true, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fp, err := FootprintOf(pages, tt.sparse)
			require.NoError(t, err)
			t.Logf("\n%s", fp)
			assert.Equal(t, tt.wantHeight, fp.Height)
			assert.GreaterOrEqual(t, fp.BufferHeadBytes, 0.9*float64(fp.BufferHeadStruct))
			assert.Less(t, fp.BufferHeadBytes, 3.0*KernelBufferHeadBytes)
			assert.GreaterOrEqual(t, fp.PageBytes, 0.9*float64(fp.FolioStruct))
			assert.InEpsilon(t, fp.KernelBytesPerPage(), fp.PageBytes, 0.5, "a page's folio and index share, against the kernel's")
			assert.InDelta(t, fp.PageBytes+8*fp.BufferHeadBytes, fp.Ring8PageBytes, 1)
		})
	}
	dense, err := FootprintOf(1<<12, false)
	require.NoError(t, err)
	sparse, err := FootprintOf(1<<12, true)
	require.NoError(t, err)
	assert.Greater(t, sparse.PageBytes, dense.PageBytes+KernelXANodeBytes/2, "spread pages need their own index nodes")
}

func TestFootprintOfErrors(t *testing.T) {
	for _, pages := range []int{0, -1, ScaleDeviceBytes/4096 + 1} {
		_, err := FootprintOf(pages, false)
		assert.Error(t, err, "%d pages", pages)
	}
}
