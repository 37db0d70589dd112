package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newRing returns a CPU and a closed ring of eight 512-byte buffers on a
// folio of its own.
func newRing(t *testing.T) (*CPU, *BufferHead) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	cpu := m.CPU(0)
	head := cpu.allocPageBuffers(&Folio{}, 512, 0)
	cpu.closeRing(head, 0)
	return cpu, head
}

// TestRingIterator pins the walk every ring loop of the package shares: each
// buffer yielded or searched is one EvRingWalk, a search counts only what
// it looked at, a nil CPU counts nothing, a nil head yields nothing, and
// the body may free the buffer it holds.
func TestRingIterator(t *testing.T) {
	cpu, head := newRing(t)
	walks := func() uint64 { return cpu.Events()[EvRingWalk] }

	var offsets []uint32
	before := walks()
	for bh := range head.ring(cpu) {
		offsets = append(offsets, bh.offset)
	}
	assert.Equal(t, []uint32{0, 512, 1024, 1536, 2048, 2560, 3072, 3584}, offsets, "once round, in ring order")
	assert.Equal(t, before+8, walks())

	before = walks()
	found := head.find(cpu, func(bh *BufferHead) bool { return bh.offset == 1024 })
	require.NotNil(t, found)
	assert.Equal(t, uint32(1024), found.offset)
	assert.Equal(t, before+3, walks(), "a search counts the buffers it looked at")
	before = walks()
	assert.Nil(t, head.find(cpu, func(*BufferHead) bool { return false }))
	assert.Equal(t, before+8, walks(), "a search that finds nothing walks the ring once")

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
	assert.Nil(t, (*BufferHead)(nil).find(cpu, func(*BufferHead) bool { return true }))

	freed := 0
	for bh := range head.ring(nil) {
		cpu.freeBH(bh) // zeroes bh, thisPage included
		freed++
	}
	assert.Equal(t, 8, freed, "the successor is read before the body frees the buffer")
}

// TestRingIteratorAllocatesNothing: ring and find, uncounted too, stay on
// the stack.
func TestRingIteratorAllocatesNothing(t *testing.T) {
	cpu, head := newRing(t)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		for bh := range head.ring(nil) {
			bh.state.Set(BHUptodate)
		}
		for bh := range head.ring(cpu) {
			bh.state.Set(BHUptodate)
		}
		head.find(nil, func(bh *BufferHead) bool { return bh.offset == 512 })
	}))
}
