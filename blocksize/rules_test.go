package blocksize_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

func TestRulesNames(t *testing.T) {
	for _, r := range []blocksize.Rules{blocksize.RulesPageSize, blocksize.RulesLarge} {
		got, err := blocksize.ParseRules(r.String())
		require.NoError(t, err)
		assert.Equal(t, r, got)
	}
	assert.Equal(t, "Rules(7)", blocksize.Rules(7).String())
	_, err := blocksize.ParseRules("v6.15")
	require.ErrorIs(t, err, blocksize.ErrUnknownRules)
	assert.Contains(t, err.Error(), "page-size, large")
}

// TestRulesValidate pins both rule sets against what the host's 6.18 did
// (bszset-powers, bszset-large, bszset-invalid, bszset-below-logical): every
// power of two from the logical block size to 64 KiB accepted, and EINVAL
// for 128K, 0, 256, 768, 1536, 3000, 6144, 2^31-1 and sizes below the
// logical block size; the older rules stop at PAGE_SIZE.
func TestRulesValidate(t *testing.T) {
	tests := []struct {
		rules             blocksize.Rules
		size, logical, ps uint32
		want              error
	}{
		{blocksize.RulesPageSize, 4096, 512, 4096, nil},
		{blocksize.RulesPageSize, 8192, 512, 4096, blocksize.ErrAbovePageSize},
		{blocksize.RulesPageSize, 65536, 512, 65536, nil},
		{blocksize.RulesLarge, 512, 512, 4096, nil},
		{blocksize.RulesLarge, 8192, 512, 4096, nil},
		{blocksize.RulesLarge, 16384, 512, 4096, nil},
		{blocksize.RulesLarge, 32768, 512, 4096, nil},
		{blocksize.RulesLarge, 65536, 512, 4096, nil},
		{blocksize.RulesLarge, 65536, 4096, 16384, nil},
		{blocksize.RulesLarge, 131072, 512, 4096, blocksize.ErrAboveMaximum},
		{blocksize.RulesLarge, 131072, 512, 65536, blocksize.ErrAboveMaximum},
		{blocksize.RulesLarge, 0, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, 256, 512, 4096, blocksize.ErrBelowMinimum},
		{blocksize.RulesLarge, 768, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, 1536, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, 3000, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, 6144, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, math.MaxInt32, 512, 4096, blocksize.ErrNotPowerOfTwo},
		{blocksize.RulesLarge, 1 << 31, 512, 4096, blocksize.ErrAboveMaximum},
		{blocksize.RulesLarge, 512, 4096, 4096, blocksize.ErrBelowLogical},
		{blocksize.RulesLarge, 1024, 4096, 4096, blocksize.ErrBelowLogical},
		{blocksize.RulesLarge, 2048, 4096, 4096, blocksize.ErrBelowLogical},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%v/%d/logical %d/page %d", tt.rules, tt.size, tt.logical, tt.ps)
		err := tt.rules.Validate(tt.size, tt.logical, tt.ps)
		if tt.want == nil {
			assert.NoError(t, err, name)
			continue
		}
		requireSizeError(t, err, "set_blocksize", tt.want)
	}
	require.ErrorIs(t, blocksize.Rules(9).Validate(4096, 512, 4096), blocksize.ErrUnknownRules)
}

func TestLargeGeometry(t *testing.T) {
	tests := []struct {
		block, size uint32
		minOrder    uint8
		perPage     uint32
		perFolio4   uint64
		blk         blocksize.Block
		index       blocksize.PageIndex
		first       blocksize.Block
	}{
		{512, 512, 0, 8, 128, 9, 1, 16},
		{4096, 4096, 0, 1, 16, 9, 9, 10},
		{8192, 8192, 1, 1, 8, 9, 18, 9},
		{16384, 16384, 2, 1, 4, 3, 12, 3},
		{65536, 65536, 4, 1, 1, 3, 48, 3},
	}
	for _, tt := range tests {
		g, err := blocksize.RulesLarge.Geometry(4096, tt.size)
		require.NoError(t, err, "%d", tt.size)
		assert.Equal(t, tt.minOrder, g.MinOrder(), "%d", tt.size)
		assert.Equal(t, tt.minOrder, blocksize.MinFolioOrder(tt.size, 4096), "%d", tt.size)
		assert.Equal(t, tt.perPage, g.BlocksPerPage(), "%d", tt.size)
		assert.Equal(t, tt.perFolio4, g.BlocksPerFolio(4), "%d", tt.size)
		assert.Equal(t, tt.index, g.PageIndex(tt.blk), "%d: page of block %d", tt.size, tt.blk)
		assert.Equal(t, tt.first, g.FirstBlock(tt.index+1), "%d: block at page %d", tt.size, tt.index+1)
	}
	g, err := blocksize.RulesLarge.Geometry(4096, 16384)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), g.BlocksPerFolio(1), "an order-1 folio cannot hold a 16 KiB block")
	assert.Equal(t, blocksize.Block(1<<20/16384), g.EndBlock(1<<20))
	_, err = blocksize.RulesPageSize.Geometry(4096, 8192)
	require.ErrorIs(t, err, blocksize.ErrAbovePageSize)
	_, err = blocksize.RulesLarge.Geometry(3000, 8192)
	require.ErrorIs(t, err, blocksize.ErrBadPageSize)
}

// FuzzRules checks the two rule sets against a direct statement of them, and
// the large geometry's page arithmetic against byte arithmetic.
func FuzzRules(f *testing.F) {
	f.Add(uint32(8192), uint32(512), uint32(4096), uint64(3))
	f.Add(uint32(131072), uint32(4096), uint32(65536), uint64(1<<40))
	f.Fuzz(func(t *testing.T, size, logical, ps uint32, block uint64) {
		if blocksize.ValidatePageSize(ps) != nil || blocksize.ValidateLogical(logical, ps) != nil {
			return
		}
		pow2 := size != 0 && size&(size-1) == 0
		okOld := pow2 && size >= 512 && size <= ps && size >= logical
		okNew := pow2 && size >= 512 && size <= max(65536, ps) && size >= logical
		assert.Equal(t, okOld, blocksize.RulesPageSize.Validate(size, logical, ps) == nil)
		assert.Equal(t, okNew, blocksize.RulesLarge.Validate(size, logical, ps) == nil)
		if !okNew {
			return
		}
		g, err := blocksize.RulesLarge.Geometry(ps, size)
		require.NoError(t, err)
		b := blocksize.Block(block)
		if !g.BlockInRange(b) {
			return
		}
		pos := block * uint64(size)
		assert.Equal(t, blocksize.PageIndex(pos/uint64(ps)), g.PageIndex(b))
		if size >= ps {
			assert.Equal(t, b, g.FirstBlock(g.PageIndex(b)))
		} else {
			assert.Equal(t, blocksize.Block(pos/uint64(ps)*uint64(ps)/uint64(size)), g.FirstBlock(g.PageIndex(b)))
		}
	})
}
