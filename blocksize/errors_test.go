package blocksize_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bhsim/bhsim/blocksize"
)

func TestSizeErrorText(t *testing.T) {
	tests := []struct {
		err  *blocksize.SizeError
		want string
	}{
		{
			&blocksize.SizeError{Op: "set_blocksize", Size: 1000, Err: blocksize.ErrNotPowerOfTwo},
			"blocksize: set_blocksize(1000): not a power of two",
		},
		{
			&blocksize.SizeError{Op: "set_blocksize", Size: 256, Limit: 512, Err: blocksize.ErrBelowMinimum},
			"blocksize: set_blocksize(256): below 512 bytes (256 < 512)",
		},
		{
			&blocksize.SizeError{Op: "set_blocksize", Size: 8192, Limit: 4096, Err: blocksize.ErrAbovePageSize},
			"blocksize: set_blocksize(8192): above PAGE_SIZE (8192 > 4096)",
		},
		{
			&blocksize.SizeError{Op: "set_blocksize", Size: 512, Limit: 4096, Err: blocksize.ErrBelowLogical},
			"blocksize: set_blocksize(512): below the logical block size (512 < 4096)",
		},
		{
			&blocksize.SizeError{Op: "PAGE_SIZE", Size: 131072, Limit: 65536, Err: blocksize.ErrBadPageSize},
			"blocksize: PAGE_SIZE(131072): invalid PAGE_SIZE (131072 > 65536)",
		},
		{
			&blocksize.SizeError{Op: "custom", Size: 7, Err: errors.New("no prefix")},
			"blocksize: custom(7): no prefix",
		},
		{
			&blocksize.SizeError{Op: "custom", Size: 7},
			"blocksize: custom(7): invalid size",
		},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
		assert.Equal(t, tt.err.Err, tt.err.Unwrap())
	}
}

func TestSizeErrorIsAndAs(t *testing.T) {
	err := blocksize.ValidateBlocksize(2048, 4096, 4096)
	assert.ErrorIs(t, err, blocksize.ErrBelowLogical)
	assert.NotErrorIs(t, err, blocksize.ErrBelowMinimum)
	var se *blocksize.SizeError
	if assert.ErrorAs(t, err, &se) {
		assert.Equal(t, "set_blocksize", se.Op)
		assert.Equal(t, uint32(2048), se.Size)
		assert.Equal(t, uint32(4096), se.Limit)
	}
}
