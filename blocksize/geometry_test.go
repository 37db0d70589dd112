package blocksize_test

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

func TestNewGeometry(t *testing.T) {
	tests := []struct {
		pageSize, blockSize uint32
		wantShift, wantBits uint8
		wantOp              string
		wantErr             error
	}{
		{4096, 512, 12, 9, "", nil},
		{4096, 4096, 12, 12, "", nil},
		{16384, 2048, 14, 11, "", nil},
		{65536, 65536, 16, 16, "", nil},
		{3000, 512, 0, 0, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{2048, 512, 0, 0, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{131072, 512, 0, 0, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{4096, 1000, 0, 0, "set_blocksize", blocksize.ErrNotPowerOfTwo},
		{4096, 256, 0, 0, "set_blocksize", blocksize.ErrBelowMinimum},
		{4096, 8192, 0, 0, "set_blocksize", blocksize.ErrAbovePageSize},
	}
	for _, tt := range tests {
		g, err := blocksize.NewGeometry(tt.pageSize, tt.blockSize)
		if tt.wantErr != nil {
			requireSizeError(t, err, tt.wantOp, tt.wantErr)
			assert.Equal(t, blocksize.Geometry{}, g)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, blocksize.Geometry{PageShift: tt.wantShift, BlkBits: tt.wantBits}, g)
		assert.Equal(t, tt.pageSize, g.PageSize())
		assert.Equal(t, tt.blockSize, g.BlockSize())
		assert.Equal(t, tt.pageSize/tt.blockSize, g.BlocksPerPage())
	}
}

// mustGeometry returns NewGeometry(pageSize, blockSize) or stops the test.
func mustGeometry(tb testing.TB, pageSize, blockSize uint32) blocksize.Geometry {
	tb.Helper()
	g, err := blocksize.NewGeometry(pageSize, blockSize)
	require.NoError(tb, err)
	return g
}

func TestGeometryBlockMapping(t *testing.T) {
	tests := []struct {
		pageSize, blockSize uint32
		block               blocksize.Block
		index               blocksize.PageIndex
		inPage, offset      uint32
	}{
		{4096, 512, 0, 0, 0, 0},
		{4096, 512, 1, 0, 1, 512},
		{4096, 512, 7, 0, 7, 3584},
		{4096, 512, 8, 1, 0, 0},
		{4096, 512, 4 << 30, 536870912, 0, 0}, // Willy's "block 4UL*1024*1024*1024"
		{4096, 1024, 4 << 30, 1 << 30, 0, 0},
		{4096, 1024, 4<<30 + 3, 1 << 30, 3, 3072},
		{4096, 4096, 4 << 30, 4 << 30, 0, 0},
		{16384, 512, 33, 1, 1, 512},
		{65536, 512, 127, 0, 127, 65024},
		{65536, 512, 128, 1, 0, 0},
		{65536, 4096, 17, 1, 1, 4096},
		{4096, 512, math.MaxUint64, math.MaxUint64 >> 3, 7, 3584},
	}
	for _, tt := range tests {
		g := mustGeometry(t, tt.pageSize, tt.blockSize)
		name := fmt.Sprintf("page=%d block=%d b=%d", tt.pageSize, tt.blockSize, tt.block)
		assert.Equal(t, tt.index, g.PageIndex(tt.block), name)
		assert.Equal(t, tt.inPage, g.BlockInPage(tt.block), name)
		assert.Equal(t, tt.offset, g.OffsetInPage(tt.block), name)
		assert.Equal(t, tt.block-blocksize.Block(tt.inPage), g.FirstBlock(tt.index), name)
	}
}

func TestGeometryRoundTrip(t *testing.T) {
	blocks := []blocksize.Block{0, 1, 7, 8, 9, 4095, 4096, 1_953_506_645, 4 << 30, 1<<61 - 1, math.MaxInt64, math.MaxUint64}
	for _, pageSize := range []uint32{4096, 16384, 65536} {
		for blockSize := uint32(512); blockSize <= pageSize; blockSize *= 2 {
			t.Run(fmt.Sprintf("page=%d/block=%d", pageSize, blockSize), func(t *testing.T) {
				g := mustGeometry(t, pageSize, blockSize)
				for _, b := range blocks {
					checkGeometryInvariants(t, g, b)
				}
			})
		}
	}
}

// checkGeometryInvariants checks the relations between a geometry's methods
// for block b, with big.Int byte offsets as the oracle.
func checkGeometryInvariants(t *testing.T, g blocksize.Geometry, b blocksize.Block) {
	t.Helper()
	per := g.BlocksPerPage()
	require.Equal(t, g.PageSize()/g.BlockSize(), per)
	idx := g.PageIndex(b)
	first := g.FirstBlock(idx)
	assert.LessOrEqual(t, first, b)
	assert.Less(t, uint64(b-first), uint64(per)) // b < first + per, without overflow
	assert.Equal(t, uint64(b-first), uint64(g.BlockInPage(b)))
	assert.Equal(t, g.BlockInPage(b)*g.BlockSize(), g.OffsetInPage(b))
	assert.Less(t, g.OffsetInPage(b), g.PageSize())
	assert.Equal(t, idx, g.PageIndex(first))

	// Byte view: b's bytes start at idx*PAGE_SIZE + offset.
	pos := new(big.Int).Mul(new(big.Int).SetUint64(uint64(b)), big.NewInt(int64(g.BlockSize())))
	page, off := new(big.Int).QuoRem(pos, big.NewInt(int64(g.PageSize())), new(big.Int))
	assert.Equal(t, page.Uint64(), uint64(idx))
	assert.Equal(t, off.Uint64(), uint64(g.OffsetInPage(b)))

	// BlockInRange: the byte offset fits MAX_LFS_FILESIZE.
	assert.Equal(t, pos.Cmp(big.NewInt(math.MaxInt64)) <= 0, g.BlockInRange(b), "BlockInRange(%d)", b)
}

func TestGeometryEndBlock(t *testing.T) {
	tests := []struct {
		pageSize, blockSize uint32
		deviceBytes         uint64
		want                blocksize.Block
	}{
		{4096, 512, 0, math.MaxUint64},
		{4096, 4096, 0, math.MaxUint64},
		{4096, 512, 511, 0},
		{4096, 512, 512, 1},
		{4096, 512, 8_001_563_222_016, 15_628_053_168},
		{4096, 4096, 8_001_563_222_016, 1_953_506_646},
		{4096, 4096, 8_001_563_222_016 + 512, 1_953_506_646}, // partial block not counted
		{65536, 65536, math.MaxUint64, math.MaxUint64 >> 16},
	}
	for _, tt := range tests {
		g := mustGeometry(t, tt.pageSize, tt.blockSize)
		assert.Equal(t, tt.want, g.EndBlock(tt.deviceBytes), "block %d, %d bytes", tt.blockSize, tt.deviceBytes)
	}
}

func TestGeometryBlockInRange(t *testing.T) {
	tests := []struct {
		blockSize uint32
		block     blocksize.Block
		want      bool
	}{
		{512, 0, true},
		{512, 4 << 30, true},
		{512, math.MaxInt64 >> 9, true},
		{512, math.MaxInt64>>9 + 1, false},
		{4096, math.MaxInt64 >> 12, true},
		{4096, math.MaxInt64>>12 + 1, false},
		{4096, math.MaxUint64, false},
	}
	for _, tt := range tests {
		g := mustGeometry(t, 4096, tt.blockSize)
		assert.Equal(t, tt.want, g.BlockInRange(tt.block), "block size %d, block %d", tt.blockSize, tt.block)
	}
}

func TestGeometryHandBuiltDoesNotPanic(t *testing.T) {
	// BlkBits > PageShift breaks the documented assumption: the results are
	// meaningless but the methods must not panic.
	g := blocksize.Geometry{PageShift: 9, BlkBits: 12}
	assert.NotPanics(t, func() {
		_ = g.BlocksPerPage()
		_ = g.PageIndex(12345)
		_ = g.FirstBlock(12345)
		_ = g.BlockInPage(12345)
		_ = g.OffsetInPage(12345)
		_ = g.EndBlock(12345)
		_ = g.BlockInRange(12345)
	})
	assert.NotPanics(t, func() { _ = blocksize.Geometry{PageShift: 255, BlkBits: 255}.OffsetInPage(1) })
}

// FuzzGeometry builds geometries from arbitrary sizes: NewGeometry must agree
// with ValidatePageSize/ValidateBlocksize, and every valid geometry (the fuzz
// input is also mapped onto one) must keep the page/block invariants.
func FuzzGeometry(f *testing.F) {
	f.Add(uint32(4096), uint32(512), uint64(1))
	f.Add(uint32(4096), uint32(512), uint64(4<<30))
	f.Add(uint32(4096), uint32(4096), uint64(1_953_506_646))
	f.Add(uint32(16384), uint32(1024), uint64(math.MaxUint64))
	f.Add(uint32(65536), uint32(512), uint64(math.MaxInt64>>9+1))
	f.Add(uint32(3000), uint32(1000), uint64(0))
	f.Fuzz(func(t *testing.T, pageSize, blockSize uint32, block uint64) {
		g, err := blocksize.NewGeometry(pageSize, blockSize)
		wantErr := blocksize.ValidatePageSize(pageSize)
		if wantErr == nil {
			wantErr = blocksize.ValidateBlocksize(blockSize, blocksize.SectorSize, pageSize)
		}
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
		} else {
			require.NoError(t, err)
			checkGeometryInvariants(t, g, blocksize.Block(block))
		}

		// Map the input onto a valid geometry so that every run checks one.
		pageShift := 12 + uint(pageSize%5)           // 4 KiB .. 64 KiB
		blkBits := 9 + uint(blockSize)%(pageShift-8) // 512 .. PAGE_SIZE
		g = mustGeometry(t, 1<<pageShift, 1<<blkBits)
		checkGeometryInvariants(t, g, blocksize.Block(block))
		end := g.EndBlock(block)
		if block != 0 {
			assert.Equal(t, blocksize.Block(block/uint64(g.BlockSize())), end)
		}
	})
}
