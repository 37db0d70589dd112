package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNullDisk(t *testing.T) {
	_, err := NewNullDisk("null", 1000, 512)
	assert.Error(t, err)
	_, err = NewNullDisk("null", 4096, 300)
	assert.Error(t, err)
	d, err := NewNullDisk("null", 1<<20, 512)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		op     Op
		sector uint64
		n      uint32
		want   error
	}{
		{"write", OpWrite, 0, 4096, nil},
		{"read", OpRead, 8, 512, nil},
		{"past the end", OpWrite, 2048, 512, ErrBeyondEnd},
		{"misaligned", OpWrite, 0, 100, ErrMisaligned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, tc.n)
			buf[0] = 7
			b := new(Bio)
			b.Reset(tc.op, tc.sector)
			b.AddVec(buf, tc.n)
			calls := 0
			b.EndIO = func(*Bio) { calls++ }
			d.Submit(b)
			assert.Equal(t, 1, calls)
			assert.ErrorIs(t, b.Err, tc.want)
			if tc.op == OpRead && tc.want == nil {
				assert.Zero(t, buf[0], "reads return zeros")
			}
		})
	}
}
