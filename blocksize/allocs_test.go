package blocksize_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

// sink keeps results alive so that the compiler cannot drop the calls.
var sink uint64

func TestHotPathsDoNotAllocate(t *testing.T) {
	g := mustGeometry(t, 4096, 512)
	tests := []struct {
		name string
		fn   func()
	}{
		{"Geometry", func() {
			b := blocksize.Block(4 << 30)
			sink += uint64(g.PageIndex(b)) + uint64(g.FirstBlock(blocksize.PageIndex(b))) + uint64(g.BlockInPage(b)+g.OffsetInPage(b)+g.BlocksPerPage())
			sink += uint64(g.EndBlock(uint64(b)))
			if g.BlockInRange(b) {
				sink++
			}
		}},
		{"NewGeometry", func() {
			g2, err := blocksize.NewGeometry(16384, 2048)
			require.NoError(t, err)
			sink += uint64(g2.BlockSize())
		}},
		{"InitBlocksize", func() {
			for _, p := range []blocksize.Policy{blocksize.PolicyGrow, blocksize.PolicyLogical} {
				n, err := p.InitBlocksize(wd8003ffbx, 512, 4096)
				require.NoError(t, err)
				sink += uint64(n)
			}
		}},
		{"Validate", func() {
			require.NoError(t, blocksize.ValidateBlocksize(4096, 512, 4096))
			require.NoError(t, blocksize.ValidateLogical(512, 4096))
			require.NoError(t, blocksize.ValidatePageSize(4096))
			bits, err := blocksize.BlksizeBits(4096)
			require.NoError(t, err)
			sink += uint64(bits)
		}},
		{"Arith", func() {
			sink += blocksize.AlignUp(sink, 512) + blocksize.AlignDown(sink, 512) + blocksize.DivRoundUp(sink, 3)
			sink += uint64(blocksize.Log2(uint32(4096)))
		}},
	}
	for _, tt := range tests {
		assert.Zero(t, testing.AllocsPerRun(100, tt.fn), tt.name)
	}
}
