package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemDiskSubmit(t *testing.T) {
	disk, err := NewMemDisk("loop0", 1<<20, 512)
	require.NoError(t, err)
	c := newCompletions()
	a, b := make([]byte, 512), make([]byte, 1024)
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 2
	}
	w := c.bio(0, OpWrite, 7) // two vectors, and a metadata-only one
	w.AddVec(a, 512)
	w.AddVec(nil, 512)
	w.AddPage(b, 1024, 3, 0)
	disk.Submit(w)
	got := make([]byte, 2048)
	_, err = disk.ReadAt(got, 7<<SectorShift)
	require.NoError(t, err)
	want := append(append(append([]byte{}, a...), make([]byte, 512)...), b...)
	assert.Equal(t, want, got)

	disk.Submit(c.pageBio(1, OpWrite, 2048, 512, 1, 0)) // past the end
	assert.ErrorIs(t, c.errs[1], ErrBeyondEnd)
	assert.Equal(t, []int{0, 1}, c.order)
	assert.Equal(t, DiskStats{Writes: 1, SectorsWrite: 4, Errors: 1}, disk.Stats())
	assert.Equal(t, uint64(8192), disk.StoredBytes(), "sector 7 in chunk 0, sectors 9-10 in chunk 1")
}
