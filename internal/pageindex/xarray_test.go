package pageindex

import (
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeightFor(t *testing.T) {
	tests := []struct {
		index    uint64
		height   int
		maxIndex uint64
	}{
		{0, 1, 63},
		{63, 1, 63},
		{64, 2, 4095},
		{4095, 2, 4095},
		{4096, 3, 1<<18 - 1},
		{1<<24 - 1, 4, 1<<24 - 1},
		{1 << 29, 5, 1<<30 - 1}, // 4 TiB of 4 KiB pages
		{1<<36 - 1, 6, 1<<36 - 1},
		{1 << 36, 7, 1<<42 - 1},
		{1<<60 - 1, 10, 1<<60 - 1},
		{1 << 60, 11, math.MaxUint64},
		{math.MaxUint64, 11, math.MaxUint64},
	}
	for _, tc := range tests {
		h := heightFor(tc.index)
		assert.Equal(t, tc.height, h, "heightFor(%#x)", tc.index)
		assert.Equal(t, tc.maxIndex, maxIndexFor(h), "maxIndexFor(%d)", h)
	}
}

func TestXArrayShapes(t *testing.T) {
	seq := func(from, n uint64) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = from + uint64(i)
		}
		return out
	}
	tests := []struct {
		name    string
		indices []uint64
		height  int
		nodes   int
	}{
		{"empty", nil, 0, 0},
		{"lone 0", []uint64{0}, 0, 0},
		{"0 and 1", []uint64{0, 1}, 1, 1},
		{"first 64 pages", seq(0, 64), 1, 1},
		{"first 4096 pages (16 MiB)", seq(0, 4096), 2, 1 + 64},
		{"4096 pages from 2^29", seq(1<<29, 4096), 5, 4 + 64},
		{"0 and 2^29", []uint64{0, 1 << 29}, 5, 1 + 4 + 4},
		{"0 and max", []uint64{0, math.MaxUint64}, 11, 1 + 10 + 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := NewXArray[folio]()
			for _, i := range tc.indices {
				require.True(t, x.Insert(i, &folio{index: i}))
			}
			require.NoError(t, x.check())
			assert.Equal(t, tc.height, x.Height())
			assert.Equal(t, tc.nodes, x.Nodes())
			for _, i := range tc.indices {
				f, levels := x.Load(i)
				require.NotNil(t, f)
				assert.Equal(t, i, f.index)
				assert.Equal(t, tc.height, levels)
			}
		})
	}
}

func TestXArrayLevelsOnMiss(t *testing.T) {
	x := NewXArray[folio]()
	require.True(t, x.Insert(1<<29, &folio{index: 1 << 29}))
	require.Equal(t, 5, x.Height())
	tests := []struct {
		name   string
		index  uint64
		levels int
	}{
		{"root slot empty", 0, 1},
		{"second level slot empty", 1<<29 + 1<<18, 2},
		{"leaf slot empty", 1<<29 + 1, 5},
		{"beyond the range of height 5", 1 << 30, 0},
		{"far beyond", math.MaxUint64, 0},
	}
	for _, tc := range tests {
		f, levels := x.Load(tc.index)
		assert.Nil(t, f, tc.name)
		assert.Equal(t, tc.levels, levels, tc.name)
	}
}

func TestXArrayLoneItemMovesBetweenHeadAndTree(t *testing.T) {
	x := NewXArray[folio]()
	zero, far := &folio{index: 0}, &folio{index: 1 << 29}
	require.True(t, x.Insert(0, zero))
	x.SetMark(0, MarkDirty)
	x.SetMark(0, MarkToWrite)
	require.NoError(t, x.check())

	require.True(t, x.Insert(1<<29, far)) // the lone item moves into a leaf
	require.NoError(t, x.check())
	f, levels := x.Load(0)
	assert.Same(t, zero, f)
	assert.Equal(t, 5, levels, "page 0 now costs as much as page 2^29")
	assert.True(t, x.Marked(0, MarkDirty))
	assert.False(t, x.Marked(0, MarkWriteback))
	assert.True(t, x.Marked(0, MarkToWrite))
	i, _, ok := x.NextMarked(1, MarkDirty)
	assert.False(t, ok, "found %#x", i)

	require.True(t, x.Delete(1<<29, far)) // and back into the head
	require.NoError(t, x.check())
	assert.Zero(t, x.Height())
	assert.Zero(t, x.Nodes())
	f, levels = x.Load(0)
	assert.Same(t, zero, f)
	assert.Zero(t, levels)
	assert.True(t, x.Marked(0, MarkDirty))
	assert.True(t, x.Marked(0, MarkToWrite))
	assert.Equal(t, 1, x.CountMarked(MarkDirty))
	i, f, ok = x.NextMarked(0, MarkToWrite)
	require.True(t, ok)
	assert.Zero(t, i)
	assert.Same(t, zero, f)
}

func TestXArrayShrinksOneLevelAtATime(t *testing.T) {
	x := NewXArray[folio]()
	items := map[uint64]*folio{}
	for _, i := range []uint64{5, 4096, 1 << 29} {
		items[i] = &folio{index: i}
		require.True(t, x.Insert(i, items[i]))
	}
	require.Equal(t, 5, x.Height())
	require.True(t, x.Delete(1<<29, items[1<<29]))
	require.NoError(t, x.check())
	assert.Equal(t, 3, x.Height(), "4096 still needs three levels")
	require.True(t, x.Delete(4096, items[4096]))
	require.NoError(t, x.check())
	assert.Equal(t, 1, x.Height())
	assert.Equal(t, 1, x.Nodes())
	f, levels := x.Load(5)
	assert.Same(t, items[5], f)
	assert.Equal(t, 1, levels)
}

func TestXArrayNodeIsTheKernelsSize(t *testing.T) {
	// The kernel's xa_node is 576 bytes on 64-bit: 64 slots and a 64-byte
	// header. Ours has a 56-byte header, so a node is 568 bytes, and Go
	// allocates it in its 576-byte size class: what a node costs the heap
	// is the kernel's size, and the header shares the node's first cache
	// line with its first slot.
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("node size is stated for 64-bit machines")
	}
	assert.LessOrEqual(t, unsafe.Offsetof(xaLeaf[folio]{}.slots), uintptr(64))
	assert.Equal(t, unsafe.Sizeof(xaLeaf[folio]{}), unsafe.Sizeof(xaInterior[folio]{}))
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	class := uint32(0) // the smallest size class a node fits
	for _, c := range st.BySize {
		if uintptr(c.Size) >= unsafe.Sizeof(xaLeaf[folio]{}) {
			class = c.Size
			break
		}
	}
	assert.Equal(t, uint32(576), class, "the heap's size for a %d-byte node", unsafe.Sizeof(xaLeaf[folio]{}))
}
