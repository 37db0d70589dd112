package blocksize_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

// sizeSentinels are the sentinels a *SizeError may wrap.
var sizeSentinels = []error{
	blocksize.ErrNotPowerOfTwo,
	blocksize.ErrBelowMinimum,
	blocksize.ErrAbovePageSize,
	blocksize.ErrAboveMaximum,
	blocksize.ErrBelowLogical,
	blocksize.ErrBadPageSize,
}

// requireSizeError checks that err is a *SizeError with the given op wrapping
// want and no other sentinel.
func requireSizeError(t *testing.T, err error, op string, want error) {
	t.Helper()
	var se *blocksize.SizeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, op, se.Op)
	for _, s := range sizeSentinels {
		assert.Equal(t, s == want, errors.Is(err, s), "%v wraps %v", err, s)
	}
}

func TestBlksizeBits(t *testing.T) {
	tests := []struct {
		size    uint32
		want    uint8
		wantErr error
	}{
		{512, 9, nil},
		{1024, 10, nil},
		{2048, 11, nil},
		{4096, 12, nil},
		{65536, 16, nil},
		{1 << 31, 31, nil},
		{0, 0, blocksize.ErrNotPowerOfTwo},
		{1000, 0, blocksize.ErrNotPowerOfTwo},
		{4097, 0, blocksize.ErrNotPowerOfTwo},
		{1, 0, blocksize.ErrBelowMinimum},
		{256, 0, blocksize.ErrBelowMinimum},
	}
	for _, tt := range tests {
		got, err := blocksize.BlksizeBits(tt.size)
		if tt.wantErr != nil {
			requireSizeError(t, err, "blksize_bits", tt.wantErr)
			continue
		}
		require.NoError(t, err, "size %d", tt.size)
		assert.Equal(t, tt.want, got, "size %d", tt.size)
		assert.Equal(t, halvingBits(tt.size), got, "size %d", tt.size)
	}
}

// halvingBits is the old blksize_bits loop shape, an oracle written
// differently from Log2: count the halvings from size down to 256, from 8.
func halvingBits(size uint32) uint8 {
	n := uint8(8)
	for s := size; s > 256; s >>= 1 {
		n++
	}
	return n
}

func TestValidatePageSize(t *testing.T) {
	tests := []struct {
		pageSize uint32
		limit    uint32
		ok       bool
	}{
		{4096, 0, true},
		{8192, 0, true},
		{16384, 0, true},
		{65536, 0, true},
		{0, 0, false},
		{5000, 0, false},
		{2048, 4096, false},
		{512, 4096, false},
		{131072, 65536, false},
		{1 << 31, 65536, false},
	}
	for _, tt := range tests {
		err := blocksize.ValidatePageSize(tt.pageSize)
		if tt.ok {
			assert.NoError(t, err, "page size %d", tt.pageSize)
			continue
		}
		requireSizeError(t, err, "PAGE_SIZE", blocksize.ErrBadPageSize)
		var se *blocksize.SizeError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, tt.limit, se.Limit, "page size %d", tt.pageSize)
	}
}

func TestValidateBlocksize(t *testing.T) {
	tests := []struct {
		name                    string
		size, logical, pageSize uint32
		wantErr                 error
		wantLimit               uint32
	}{
		{"512 on 512e", 512, 512, 4096, nil, 0},
		{"4K on 512e", 4096, 512, 4096, nil, 0},
		{"4K on 4Kn", 4096, 4096, 4096, nil, 0},
		{"16K page", 16384, 512, 16384, nil, 0},
		{"64K page", 65536, 4096, 65536, nil, 0},
		{"zero", 0, 512, 4096, blocksize.ErrNotPowerOfTwo, 0},
		{"1000", 1000, 512, 4096, blocksize.ErrNotPowerOfTwo, 0},
		{"not pow2 and too big", 12288, 512, 4096, blocksize.ErrNotPowerOfTwo, 0},
		{"not pow2 and too small", 3, 512, 4096, blocksize.ErrNotPowerOfTwo, 0},
		{"256", 256, 512, 4096, blocksize.ErrBelowMinimum, 512},
		{"256 below logical too", 256, 4096, 4096, blocksize.ErrBelowMinimum, 512},
		{"8K on 4K pages", 8192, 512, 4096, blocksize.ErrAbovePageSize, 4096},
		{"128K on 64K pages", 131072, 512, 65536, blocksize.ErrAbovePageSize, 65536},
		{"above page and below logical", 8192, 16384, 4096, blocksize.ErrAbovePageSize, 4096},
		{"512 on 4Kn", 512, 4096, 4096, blocksize.ErrBelowLogical, 4096},
		{"2K on 4Kn", 2048, 4096, 16384, blocksize.ErrBelowLogical, 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := blocksize.ValidateBlocksize(tt.size, tt.logical, tt.pageSize)
			if tt.wantErr == nil {
				assert.NoError(t, err)
				return
			}
			requireSizeError(t, err, "set_blocksize", tt.wantErr)
			var se *blocksize.SizeError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.size, se.Size)
			assert.Equal(t, tt.wantLimit, se.Limit)
		})
	}
}

func TestValidateLogical(t *testing.T) {
	tests := []struct {
		logical, pageSize uint32
		wantErr           error
	}{
		{512, 4096, nil},
		{4096, 4096, nil},
		{8192, 16384, nil},
		{0, 4096, blocksize.ErrNotPowerOfTwo},
		{520, 4096, blocksize.ErrNotPowerOfTwo},
		{256, 4096, blocksize.ErrBelowMinimum},
		{8192, 4096, blocksize.ErrAbovePageSize},
	}
	for _, tt := range tests {
		err := blocksize.ValidateLogical(tt.logical, tt.pageSize)
		if tt.wantErr == nil {
			assert.NoError(t, err, "logical %d page %d", tt.logical, tt.pageSize)
			continue
		}
		requireSizeError(t, err, "logical_block_size", tt.wantErr)
	}
}

// FuzzValidateBlocksize checks BlksizeBits, ValidateBlocksize,
// ValidateLogical and ValidatePageSize against direct restatements of their
// rules, for arbitrary sizes.
func FuzzValidateBlocksize(f *testing.F) {
	f.Add(uint32(4096), uint32(512), uint32(4096))
	f.Add(uint32(1000), uint32(512), uint32(4096))
	f.Add(uint32(256), uint32(512), uint32(4096))
	f.Add(uint32(8192), uint32(512), uint32(4096))
	f.Add(uint32(512), uint32(4096), uint32(4096))
	f.Add(uint32(0), uint32(0), uint32(0))
	f.Add(uint32(1<<31), uint32(1<<31), uint32(65536))
	f.Fuzz(func(t *testing.T, size, logical, pageSize uint32) {
		pow2 := size != 0 && size&(size-1) == 0

		bits, err := blocksize.BlksizeBits(size)
		if pow2 && size >= 512 {
			require.NoError(t, err)
			assert.Equal(t, size, uint32(1)<<bits)
			assert.Equal(t, halvingBits(size), bits)
		} else {
			assert.Error(t, err)
		}

		var want error
		switch {
		case !pow2:
			want = blocksize.ErrNotPowerOfTwo
		case size < 512:
			want = blocksize.ErrBelowMinimum
		case size > pageSize:
			want = blocksize.ErrAbovePageSize
		case size < logical:
			want = blocksize.ErrBelowLogical
		}
		err = blocksize.ValidateBlocksize(size, logical, pageSize)
		if want == nil {
			assert.NoError(t, err)
		} else {
			requireSizeError(t, err, "set_blocksize", want)
		}

		if want == blocksize.ErrBelowLogical {
			want = nil // not a check ValidateLogical makes
		}
		err = blocksize.ValidateLogical(size, pageSize)
		if want == nil {
			assert.NoError(t, err)
		} else {
			requireSizeError(t, err, "logical_block_size", want)
		}

		err = blocksize.ValidatePageSize(pageSize)
		if pageSize == 4096 || pageSize == 8192 || pageSize == 16384 || pageSize == 32768 || pageSize == 65536 {
			assert.NoError(t, err)
		} else {
			requireSizeError(t, err, "PAGE_SIZE", blocksize.ErrBadPageSize)
		}
	})
}
