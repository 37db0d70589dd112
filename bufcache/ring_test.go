package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRingIterator pins the walk every ring loop of the package shares: each
// buffer yielded is one EvRingWalk, an early stop counts only what was
// seen, a nil CPU counts nothing, a nil head yields nothing, the body may
// free the buffer it holds, and an unclosed alloc_page_buffers list ends at
// its tail.
func TestRingIterator(t *testing.T) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	cpu := m.CPU(0)
	f := &Folio{}
	head := cpu.allocPageBuffers(f, 512, 0) // AllocLinear: a NULL-terminated list of 8
	walks := func() uint64 { return cpu.Events()[EvRingWalk] }

	var offsets []uint32
	before := walks()
	for bh := range head.ring(cpu) {
		offsets = append(offsets, bh.offset)
	}
	assert.Equal(t, []uint32{0, 512, 1024, 1536, 2048, 2560, 3072, 3584}, offsets, "the open list, to its tail")
	assert.Equal(t, before+8, walks())

	cpu.closeRing(head, 0)
	before = walks()
	n := 0
	for bh := range head.ring(cpu) {
		if n++; bh.offset == 1024 {
			break
		}
	}
	assert.Equal(t, 3, n)
	assert.Equal(t, before+3, walks(), "an early stop counts the buffers seen")

	before = walks()
	var second []*BufferHead
	for bh := range head.thisPage.ring(nil) {
		second = append(second, bh)
	}
	assert.Len(t, second, 8, "a walk from any buffer goes round once")
	assert.Same(t, head, second[7])
	assert.Equal(t, before, walks(), "a nil CPU counts nothing")

	for range (*BufferHead)(nil).ring(cpu) {
		t.Fatal("a nil head yields nothing")
	}

	freed := 0
	for bh := range head.ring(nil) {
		cpu.freeBH(bh) // zeroes bh, thisPage included
		freed++
	}
	assert.Equal(t, 8, freed, "the successor is read before the body frees the buffer")
}
